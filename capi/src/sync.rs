//! Locks for the library's few globals (error handler, hooks, last error) with one API in
//! both builds: std's locks when hosted (a panic while holding one is ignored rather than
//! poisoning the library), `spin` locks on bare metal where there is no OS to block on.

#[cfg(feature = "std")]
mod imp {
    pub(crate) type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;
    pub(crate) type ReadGuard<'a, T> = std::sync::RwLockReadGuard<'a, T>;
    pub(crate) type WriteGuard<'a, T> = std::sync::RwLockWriteGuard<'a, T>;

    /// A mutex whose `lock` never fails.
    pub(crate) struct Mutex<T>(std::sync::Mutex<T>);
    impl<T> Mutex<T> {
        pub(crate) const fn new(v: T) -> Self {
            Mutex(std::sync::Mutex::new(v))
        }
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(|p| p.into_inner())
        }
    }

    /// A reader-writer lock whose `read`/`write` never fail.
    pub(crate) struct RwLock<T>(std::sync::RwLock<T>);
    impl<T> RwLock<T> {
        pub(crate) const fn new(v: T) -> Self {
            RwLock(std::sync::RwLock::new(v))
        }
        pub(crate) fn read(&self) -> ReadGuard<'_, T> {
            self.0.read().unwrap_or_else(|p| p.into_inner())
        }
        pub(crate) fn write(&self) -> WriteGuard<'_, T> {
            self.0.write().unwrap_or_else(|p| p.into_inner())
        }
    }
}

#[cfg(not(feature = "std"))]
mod imp {
    pub(crate) type MutexGuard<'a, T> = spin::MutexGuard<'a, T>;

    /// A spin mutex (bare metal: there is no scheduler to block on).
    pub(crate) struct Mutex<T>(spin::Mutex<T>);
    impl<T> Mutex<T> {
        pub(crate) const fn new(v: T) -> Self {
            Mutex(spin::Mutex::new(v))
        }
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0.lock()
        }
    }

    /// A spin reader-writer lock.
    pub(crate) struct RwLock<T>(spin::RwLock<T>);
    impl<T> RwLock<T> {
        pub(crate) const fn new(v: T) -> Self {
            RwLock(spin::RwLock::new(v))
        }
        pub(crate) fn read(&self) -> spin::RwLockReadGuard<'_, T> {
            self.0.read()
        }
        pub(crate) fn write(&self) -> spin::RwLockWriteGuard<'_, T> {
            self.0.write()
        }
    }
}

pub(crate) use imp::{Mutex, MutexGuard, RwLock};

/// Bare metal has no threads to keep apart: a `thread_local!` static becomes one global value,
/// created on first use and reached through the same `with` call (behind a spin lock, so a
/// second core calling in still sees consistent data; it shares the value).
#[cfg(not(feature = "std"))]
pub(crate) struct Global<T> {
    cell: spin::Once<spin::Mutex<T>>,
    init: fn() -> T,
}

#[cfg(not(feature = "std"))]
impl<T> Global<T> {
    pub(crate) const fn new(init: fn() -> T) -> Self {
        Global { cell: spin::Once::new(), init }
    }
    /// Runs `f` on the value (as `LocalKey::with`).
    pub(crate) fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        let m = self.cell.call_once(|| spin::Mutex::new((self.init)()));
        f(&*m.lock())
    }
}

/// `thread_local!` for bare metal: the same declarations compile to [`Global`]s.
#[cfg(not(feature = "std"))]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* static $name:ident : $t:ty = const { $init:expr } $(; $($rest:tt)*)?) => {
        $(#[$attr])* static $name: $crate::sync::Global<$t> = $crate::sync::Global::new(|| $init);
        $(thread_local!($($rest)*);)?
    };
    ($(#[$attr:meta])* static $name:ident : $t:ty = $init:expr $(; $($rest:tt)*)?) => {
        $(#[$attr])* static $name: $crate::sync::Global<$t> = $crate::sync::Global::new(|| $init);
        $(thread_local!($($rest)*);)?
    };
}
