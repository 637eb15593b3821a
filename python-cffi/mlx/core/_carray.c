/* mlx.core._mlx_carray: the C-level part of mlx.core.array (see _carray_build.py and
 * docs/PYTHON.md, "The C array type").
 *
 * Why: with a Python class, every result array costs a cffi 'mlx_array *' allocation, a Python
 * object with __slots__ and a Python __del__ frame to free the handle; py21/py23 measured these
 * as most of an op's call. Here the handle lives inside the object and a C tp_dealloc frees it.
 *
 * What: make_type() builds mlx.core.array itself as a C heap type whose instances hold the
 * mlx_array handle inline; the Python class body (_array.py) supplies the methods, copied onto
 * it. The cffi layer still reaches the handle through `a._p`, an 'mlx_array *' into the object
 * (cffi's own C entry points, from _cffi_backend's _C_API capsule, make and read that pointer).
 * fast_op() wraps a bound op (mx.add, mx.exp...) whose parameters are only arrays and the
 * stream: the common call (arrays, or one array and a Python int/float, no keywords, on the
 * thread that imported mlx) goes straight to its C function, anything else to the Python
 * function. install_binop() does the same for the arithmetic operator slots (a + b, a * 2.0).
 * Which ops get a fast path is decided in Python from the binder's tables, not listed here.
 *
 * The extension is not linked against libmlx_arm.so: its symbols resolve against the global
 * load _ffi makes before importing it (as for the cffi API-mode module). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <pythread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "mlx/c/mlx.h"

#ifndef MLX_ARM_CDEF_STAMP
#error "built by _carray_build.py, which defines MLX_ARM_CDEF_STAMP"
#endif
/* Bumped with every change of this file's Python-facing behaviour: _array.py refuses a build
 * of another version (a stale build then means the pure-Python array, not a wrong one). */
#define CARRAY_VERSION 9

typedef int (*unary_fn)(mlx_array *, const mlx_array, const mlx_stream);
typedef int (*binary_fn)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);

/* cffi's C entry points (the table its API-mode modules use; its layout is cffi's ABI). */
#define CFFI_NUM_EXPORTS 28
static void *cffi_api[CFFI_NUM_EXPORTS];
#define cffi_from_c_pointer ((PyObject * (*)(char *, PyObject *)) cffi_api[10])
#define cffi_to_c_pointer ((char *(*)(PyObject *, PyObject *))cffi_api[11])
#define cffi_to_c ((int (*)(char *, PyObject *, PyObject *))cffi_api[17])

typedef struct {
    PyObject_HEAD
    mlx_array h;        /* the handle this object owns (ctx NULL: none) */
    PyObject *p;        /* cffi 'mlx_array *' at h, made on first use of ._p */
    PyObject *s;        /* the shape tuple, cached on first use */
    PyObject *d;        /* the Dtype, cached on first use */
    PyObject *weakrefs;
} CArray;

/* Set once by setup() (module state of a module that is imported once per process). */
static PyTypeObject *array_type;   /* mlx.core.array, made by make_type() */
static PyObject *arr_ptr_ct;       /* ffi.typeof("mlx_array *") */
static PyObject *stream_ct;        /* ffi.typeof("mlx_stream") */
static PyObject *dtypes;           /* tuple: Dtype by code (None for gaps) */
static PyObject *error_fn;         /* _ffi.error: the exception for the last C error */
static mlx_stream main_stream;     /* the importing thread's current stream (set_stream) */
static unsigned long main_thread;  /* the importing thread's ident */
static int ready;

static PyObject *raise_last_error(void) {
    PyObject *e = PyObject_CallNoArgs(error_fn);
    if (e == NULL) return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
    return NULL;
}

/* A new array owning h (freed on failure). */
static PyObject *new_array(mlx_array h) {
    CArray *a = (CArray *)array_type->tp_alloc(array_type, 0);
    if (a == NULL) {
        mlx_array_free(h);
        return NULL;
    }
    a->h = h;
    return (PyObject *)a;
}

static void carray_dealloc(CArray *a) {
    PyTypeObject *tp = Py_TYPE(a);
    if (a->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)a);
    if (a->h.ctx != NULL) mlx_array_free(a->h);
    Py_XDECREF(a->p);
    Py_XDECREF(a->s);
    Py_XDECREF(a->d);
    tp->tp_free((PyObject *)a);
    Py_DECREF(tp); /* instances of a heap type hold a reference to it */
}

/* -1 with an exception: a NULL 'mlx_array *' (cffi turns None / ffi.NULL into one). */
static int null_pointer(void) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "mlx.core.array: a null 'mlx_array *'");
    return -1;
}

static int has_handle(CArray *a) {
    if (a->h.ctx != NULL) return 1;
    PyErr_SetString(PyExc_AttributeError, "mlx.core.array: this array holds no data");
    return 0;
}

/* ._p: the cffi pointer to the handle (the cffi layer's view of the object). */
static PyObject *get_p(CArray *a, void *c) {
    if (a->p == NULL) {
        a->p = cffi_from_c_pointer((char *)&a->h, arr_ptr_ct);
        if (a->p == NULL) return NULL;
    }
    Py_INCREF(a->p);
    return a->p;
}

/* ._p = ptr takes over the handle ptr points at (the caller gives up its ownership: a fresh
 * cffi pointer, or another array's ._p followed by `other._p = None`); ._p = None forgets the
 * handle without freeing it (it was moved out). A replaced handle is freed. */
static int set_p(CArray *a, PyObject *v, void *c) {
    if (v == NULL) {
        PyErr_SetString(PyExc_AttributeError, "mlx.core.array: _p cannot be deleted");
        return -1;
    }
    Py_CLEAR(a->s);
    Py_CLEAR(a->d);
    if (v == Py_None) {
        a->h.ctx = NULL;
        return 0;
    }
    char *ptr = cffi_to_c_pointer(v, arr_ptr_ct);
    if (ptr == NULL) return null_pointer();
    if (ptr == (char *)&a->h) return 0;
    mlx_array old = a->h;
    memcpy(&a->h, ptr, sizeof(mlx_array));
    if (old.ctx != NULL && old.ctx != a->h.ctx) mlx_array_free(old);
    return 0;
}

static PyObject *get_cache(PyObject *o) {
    PyObject *r = o ? o : Py_None;
    Py_INCREF(r);
    return r;
}

static int set_cache(PyObject **slot, PyObject *v) {
    PyObject *old = *slot;
    *slot = (v == NULL || v == Py_None) ? NULL : (Py_INCREF(v), v);
    Py_XDECREF(old);
    return 0;
}

static PyObject *get_s(CArray *a, void *c) { return get_cache(a->s); }
static int set_s(CArray *a, PyObject *v, void *c) { return set_cache(&a->s, v); }
static PyObject *get_d(CArray *a, void *c) { return get_cache(a->d); }
static int set_d(CArray *a, PyObject *v, void *c) { return set_cache(&a->d, v); }

static PyObject *get_shape(CArray *a, void *c) {
    if (a->s == NULL) {
        if (!has_handle(a)) return NULL;
        size_t n = mlx_array_ndim(a->h);
        const int *dims = n ? mlx_array_shape(a->h) : NULL;
        if (n && dims == NULL) return raise_last_error();
        PyObject *t = PyTuple_New((Py_ssize_t)n);
        if (t == NULL) return NULL;
        for (size_t i = 0; i < n; i++) {
            PyObject *d = PyLong_FromLong(dims[i]);
            if (d == NULL) {
                Py_DECREF(t);
                return NULL;
            }
            PyTuple_SET_ITEM(t, (Py_ssize_t)i, d);
        }
        a->s = t;
    }
    Py_INCREF(a->s);
    return a->s;
}

static PyObject *get_dtype(CArray *a, void *c) {
    if (a->d == NULL) {
        if (!has_handle(a)) return NULL;
        int code = (int)mlx_array_dtype(a->h);
        if (code < 0 || code >= PyTuple_GET_SIZE(dtypes) || PyTuple_GET_ITEM(dtypes, code) == Py_None) {
            PyErr_Format(PyExc_RuntimeError, "mlx.core.array: unknown dtype code %d", code);
            return NULL;
        }
        a->d = PyTuple_GET_ITEM(dtypes, code);
        Py_INCREF(a->d);
    }
    Py_INCREF(a->d);
    return a->d;
}

static PyObject *get_ndim(CArray *a, void *c) {
    return has_handle(a) ? PyLong_FromSize_t(mlx_array_ndim(a->h)) : NULL;
}

static PyObject *get_size(CArray *a, void *c) {
    return has_handle(a) ? PyLong_FromSize_t(mlx_array_size(a->h)) : NULL;
}

static PyGetSetDef carray_getset[] = {
    {"_p", (getter)get_p, (setter)set_p, "cffi 'mlx_array *' to the handle", NULL},
    {"_s", (getter)get_s, (setter)set_s, "cached shape", NULL},
    {"_d", (getter)get_d, (setter)set_d, "cached dtype", NULL},
    {"shape", (getter)get_shape, NULL, "The array's dimensions, a tuple of ints.", NULL},
    {"dtype", (getter)get_dtype, NULL, "The array's element type.", NULL},
    {"ndim", (getter)get_ndim, NULL, "The number of dimensions.", NULL},
    {"size", (getter)get_size, NULL, "The number of elements.", NULL},
    {NULL},
};

static PyMemberDef carray_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(CArray, weakrefs), READONLY},
    {NULL},
};

/* ---- fast calls ----------------------------------------------------------------------- */

/* Scalar operands are constants: as _array.weak_scalar's cache, the 0-d array made for a
 * (dtype, value) is kept and reused (`a * 2.0` in a loop makes one constant). Arrays are
 * immutable graph nodes, so sharing one is safe. Direct-mapped: a clash replaces the entry. */
#define SCALAR_SLOTS 64
static struct {
    mlx_array h;
    uint32_t bits;
    int code; /* 0: empty, 1: float32, 2: int32 */
} scalars[SCALAR_SLOTS];

static mlx_array cached_scalar(int code, uint32_t bits) {
    unsigned i = (bits * 2654435761u >> 26) ^ (unsigned)code;
    i &= SCALAR_SLOTS - 1;
    if (scalars[i].code == code && scalars[i].bits == bits) return scalars[i].h;
    mlx_array h;
    if (code == 1) {
        float f;
        memcpy(&f, &bits, sizeof f);
        h = mlx_array_new_float32(f);
    } else {
        h = mlx_array_new_int((int)(int32_t)bits);
    }
    if (h.ctx == NULL) return h;
    if (scalars[i].code != 0) mlx_array_free(scalars[i].h);
    scalars[i].h = h, scalars[i].bits = bits, scalars[i].code = code;
    return h;
}

static mlx_array f32_scalar(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return cached_scalar(1, bits);
}

/* The Python int/float v as an operand next to an array of the given dtype, as _array.weak_scalar
 * makes it, for the cases that need no range error or half-precision packing: next to float32
 * a float or an int of at most 2^24 (exact in float32); next to int32 an int in int32's range,
 * or a float (float32). 1 with *out set (a cached constant: not to be freed), 0 when not such
 * a case (the Python path decides). */
static int weak_scalar(PyObject *v, mlx_dtype dt, mlx_array *out) {
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyFloat_Type) {
        if (dt != MLX_FLOAT32 && dt != MLX_INT32) return 0;
        double x = PyFloat_AS_DOUBLE(v);
        if (!(fabs(x) <= FLT_MAX) && !isinf(x) && !isnan(x)) return 0;  /* (overflow: Python's rule) */
        *out = f32_scalar((float)x);
        return out->ctx != NULL;
    }
    if (t != &PyLong_Type) return 0; /* (bool is its own type: the Python path) */
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    if (dt == MLX_FLOAT32 && x >= -(1LL << 24) && x <= (1LL << 24)) {
        *out = f32_scalar((float)x);
    } else if (dt == MLX_INT32 && x >= INT32_MIN && x <= INT32_MAX) {
        *out = cached_scalar(2, (uint32_t)(int32_t)x);
    } else {
        return 0;
    }
    return out->ctx != NULL;
}

static int on_main_thread(void) { return PyThread_get_thread_ident() == main_thread; }

static PyObject *call_result(int rc, mlx_array r) {
    if (rc != 0) {
        if (r.ctx != NULL) mlx_array_free(r);
        return raise_last_error();
    }
    return new_array(r);
}

/* fn(x, y) when both are arrays, or one an array and `weak` allows a Python scalar beside it;
 * NULL without an exception set: not a fast case. */
static PyObject *binary_fast(binary_fn fn, PyObject *x, PyObject *y, int weak) {
    mlx_array hx, hy, tmp, r = {NULL};
    if (!on_main_thread()) return NULL;
    if (Py_TYPE(x) == array_type) {
        hx = ((CArray *)x)->h;
        if (hx.ctx == NULL) return NULL;
        if (Py_TYPE(y) == array_type) {
            hy = ((CArray *)y)->h;
            if (hy.ctx == NULL) return NULL;
        } else if (weak && weak_scalar(y, mlx_array_dtype(hx), &tmp)) {
            hy = tmp;
        } else {
            return NULL;
        }
    } else if (weak && Py_TYPE(y) == array_type) {
        hy = ((CArray *)y)->h;
        if (hy.ctx == NULL || !weak_scalar(x, mlx_array_dtype(hy), &tmp)) return NULL;
        hx = tmp;
    } else {
        return NULL;
    }
    return call_result(fn(&r, hx, hy, main_stream), r);
}

/* ---- fast ops (mx.add, mx.exp, ...) ------------------------------------------------------ */

/* Ops of one array and int / bool / dtype / int-sequence parameters (mx.reshape, mx.sum,
 * a.astype...): the C parameters after the array, one letter each, make the variant's
 * pattern: 'i' int, 'b' bool, 'd' mlx_dtype, 'I' (const int *, size_t). PATTERNS lists those
 * this file can call (_fastpath.py offers only these, after checking the C function's type). */
#define ARGS_MAX 4
static const char *const patterns[] = {"", "i", "ii", "b", "d", "I", "ib", "Ib", NULL};
typedef int (*fn_i)(mlx_array *, const mlx_array, int, const mlx_stream);
typedef int (*fn_ii)(mlx_array *, const mlx_array, int, int, const mlx_stream);
typedef int (*fn_b)(mlx_array *, const mlx_array, bool, const mlx_stream);
typedef int (*fn_d)(mlx_array *, const mlx_array, mlx_dtype, const mlx_stream);
typedef int (*fn_I)(mlx_array *, const mlx_array, const int *, size_t, const mlx_stream);
typedef int (*fn_ib)(mlx_array *, const mlx_array, int, bool, const mlx_stream);
typedef int (*fn_Ib)(mlx_array *, const mlx_array, const int *, size_t, bool, const mlx_stream);

/* One C function of an op: its pattern's index and, per C parameter, the Python parameter it
 * takes its value from. */
typedef struct {
    void *fn; /* NULL: the op has no such variant */
    int pat;
    int src[ARGS_MAX];
} ArgVariant;

enum { V_NONE, V_AXIS, V_AXES, V_COUNT }; /* by the axis argument: None, an int, a sequence */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback; /* the bound Python function: every call that is not a fast case */
    void *fn;           /* the C op */
    int arity;          /* 1 (unary_fn) or 2 (binary_fn); 0: an op with parameters (below) */
    int weak;           /* binary: a Python scalar operand is weakly typed (the binder's op.weak) */
    /* arity 0: the Python parameters after the array (stream excluded) */
    int np, npos;             /* how many; how many of them may be positional */
    int axis;                 /* the one choosing the variant (V_*), or -1: variant V_NONE only */
    int varargs;              /* a method taking its ints as *args too (a.reshape(2, 3)) */
    PyObject *names[ARGS_MAX];    /* their names (interned) */
    PyObject *defaults[ARGS_MAX]; /* their defaults (NULL: required) */
    ArgVariant var[V_COUNT];
} FastOp;

/* A Python int in int32's range (not bool); 0: not one. */
static int c_int(PyObject *v, int *out) {
    if (Py_TYPE(v) != &PyLong_Type) return 0;
    int overflow = 0;
    long x = PyLong_AsLongAndOverflow(v, &overflow);
    if (overflow || x < INT32_MIN || x > INT32_MAX || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = (int)x;
    return 1;
}

#define INTS_MAX 16
typedef struct {
    int v[INTS_MAX];
    size_t n;
} Ints;

/* A tuple/list of Python ints (or one int, as _binder._ints takes it) into *out; 0: not one. */
static int c_ints(PyObject *v, Ints *out) {
    if (Py_TYPE(v) == &PyLong_Type) {
        out->n = 1;
        return c_int(v, &out->v[0]);
    }
    if (!PyTuple_CheckExact(v) && !PyList_CheckExact(v)) return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    if (n > INTS_MAX) return 0;
    PyObject **items = PySequence_Fast_ITEMS(v);
    for (Py_ssize_t k = 0; k < n; k++)
        if (!c_int(items[k], &out->v[k])) return 0;
    out->n = (size_t)n;
    return 1;
}

/* The call of an arity-0 op for the array h and the Python values vals[np]; NULL without an
 * exception: not a fast case. */
static PyObject *args_call(FastOp *f, mlx_array h, PyObject **vals) {
    int vi = V_NONE;
    if (f->axis >= 0) {
        PyObject *ax = vals[f->axis];
        if (ax == Py_None) {
            vi = V_NONE;
        } else if (Py_TYPE(ax) == &PyLong_Type) {
            vi = f->var[V_AXIS].fn != NULL ? V_AXIS : V_AXES;
        } else if (PyTuple_CheckExact(ax) || PyList_CheckExact(ax)) {
            vi = f->var[V_AXES].fn != NULL || PySequence_Fast_GET_SIZE(ax) != 1 ? V_AXES : V_AXIS;
            if (vi == V_AXIS) ax = PySequence_Fast_GET_ITEM(ax, 0);
            vals[f->axis] = ax;
        } else {
            return NULL;
        }
    }
    ArgVariant *v = &f->var[vi];
    if (v->fn == NULL) return NULL;
    const char *pat = patterns[v->pat];
    int iv[ARGS_MAX] = {0};
    bool bv[ARGS_MAX] = {0};
    mlx_dtype dv = MLX_FLOAT32;
    Ints ints;
    ints.n = 0;
    for (int k = 0; pat[k]; k++) {
        PyObject *x = vals[v->src[k]];
        switch (pat[k]) {
        case 'i':
            if (!c_int(x, &iv[k])) return NULL;
            break;
        case 'b':
            if (x != Py_True && x != Py_False) return NULL;
            bv[k] = x == Py_True;
            break;
        case 'd': {
            Py_ssize_t c = 0, nd = PyTuple_GET_SIZE(dtypes);
            while (c < nd && PyTuple_GET_ITEM(dtypes, c) != x) c++;
            if (c == nd) return NULL;
            dv = (mlx_dtype)c;
            break;
        }
        case 'I':
            if (!c_ints(x, &ints)) return NULL;
            break;
        }
    }
    mlx_array r = {NULL};
    int rc;
    switch (v->pat) {
    case 0: rc = ((unary_fn)v->fn)(&r, h, main_stream); break;
    case 1: rc = ((fn_i)v->fn)(&r, h, iv[0], main_stream); break;
    case 2: rc = ((fn_ii)v->fn)(&r, h, iv[0], iv[1], main_stream); break;
    case 3: rc = ((fn_b)v->fn)(&r, h, bv[0], main_stream); break;
    case 4: rc = ((fn_d)v->fn)(&r, h, dv, main_stream); break;
    case 5: rc = ((fn_I)v->fn)(&r, h, ints.v, ints.n, main_stream); break;
    case 6: rc = ((fn_ib)v->fn)(&r, h, iv[0], bv[1], main_stream); break;
    case 7: rc = ((fn_Ib)v->fn)(&r, h, ints.v, ints.n, bv[1], main_stream); break;
    default: return NULL;
    }
    return call_result(rc, r);
}

/* Binds an arity-0 op's call (positional and keyword, stream None only) and runs args_call. */
static PyObject *args_fast(FastOp *f, PyObject *const *args, Py_ssize_t n, PyObject *kwnames) {
    if (n < 1 || Py_TYPE(args[0]) != array_type || ((CArray *)args[0])->h.ctx == NULL || !on_main_thread()) return NULL;
    PyObject *vals[ARGS_MAX] = {NULL};
    PyObject *tuple = NULL;
    Py_ssize_t np = n - 1;
    if (f->varargs && kwnames == NULL && np > 1) { /* a.reshape(2, 3): the ints are the shape */
        tuple = PyTuple_New(np);
        if (tuple == NULL) return NULL;
        for (Py_ssize_t k = 0; k < np; k++) PyTuple_SET_ITEM(tuple, k, (Py_INCREF(args[k + 1]), args[k + 1]));
        vals[0] = tuple;
        np = 1;
    } else if (np > f->npos) {
        return NULL;
    } else {
        for (Py_ssize_t k = 0; k < np; k++) vals[k] = args[k + 1];
    }
    PyObject *r = NULL;
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k), *x = args[n + k];
        int j = 0;
        while (j < f->np && f->names[j] != name) j++;
        if (j == f->np) {
            if (x == Py_None && PyUnicode_CompareWithASCIIString(name, "stream") == 0) continue;
            goto done; /* (another name, an interned one elsewhere, or a stream: Python decides) */
        }
        if (vals[j] != NULL) goto done;
        vals[j] = x;
    }
    for (int j = 0; j < f->np; j++) {
        if (vals[j] == NULL && (vals[j] = f->defaults[j]) == NULL) goto done;
    }
    r = args_call(f, ((CArray *)args[0])->h, vals);
done:
    Py_XDECREF(tuple);
    return r;
}

static PyObject *fastop_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    FastOp *f = (FastOp *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (f->arity == 0) {
        PyObject *r = args_fast(f, args, n, kwnames);
        if (r != NULL || PyErr_Occurred()) return r;
    } else if (kwnames == NULL && n == f->arity) {
        if (n == 2) {
            PyObject *r = binary_fast((binary_fn)f->fn, args[0], args[1], f->weak);
            if (r != NULL || PyErr_Occurred()) return r;
        } else if (Py_TYPE(args[0]) == array_type && ((CArray *)args[0])->h.ctx != NULL && on_main_thread()) {
            mlx_array r = {NULL};
            return call_result(((unary_fn)f->fn)(&r, ((CArray *)args[0])->h, main_stream), r);
        }
    }
    return PyObject_Vectorcall(f->fallback, args, nargsf, kwnames);
}

static void fastop_dealloc(FastOp *f) {
    PyTypeObject *tp = Py_TYPE(f);
    Py_XDECREF(f->fallback);
    for (int j = 0; j < ARGS_MAX; j++) {
        Py_XDECREF(f->names[j]);
        Py_XDECREF(f->defaults[j]);
    }
    tp->tp_free((PyObject *)f);
    Py_DECREF(tp);
}

/* Attributes are the Python function's (__name__, __doc__, __signature__ through __wrapped__,
 * _op...): the object stands for it. */
static PyObject *fastop_getattro(FastOp *f, PyObject *name) {
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
        Py_INCREF(f->fallback);
        return f->fallback;
    }
    return PyObject_GetAttr(f->fallback, name);
}

static int fastop_setattro(FastOp *f, PyObject *name, PyObject *v) {
    return PyObject_SetAttr(f->fallback, name, v);
}

static PyObject *fastop_repr(FastOp *f) { return PyObject_Repr(f->fallback); }

static PyMemberDef fastop_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(FastOp, vectorcall), READONLY},
    {NULL},
};

static PyType_Slot fastop_slots[] = {
    {Py_tp_dealloc, fastop_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_getattro, fastop_getattro},
    {Py_tp_setattro, fastop_setattro},
    {Py_tp_repr, fastop_repr},
    {Py_tp_members, fastop_members},
    {0, NULL},
};

static PyType_Spec fastop_spec = {
    "mlx.core._FastOp", sizeof(FastOp), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL
#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
        | Py_TPFLAGS_DISALLOW_INSTANTIATION
#endif
    , fastop_slots,
};
static PyTypeObject *fastop_type;

/* The method flavour (array.reshape, array.sum...): a descriptor binding the array as the
 * first argument, as a Python function in a class body does. */
static PyObject *fastmethod_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyType_Slot fastmethod_slots[] = {
    {Py_tp_dealloc, fastop_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_getattro, fastop_getattro},
    {Py_tp_setattro, fastop_setattro},
    {Py_tp_repr, fastop_repr},
    {Py_tp_members, fastop_members},
    {Py_tp_descr_get, fastmethod_get},
    {0, NULL},
};

static PyType_Spec fastmethod_spec = {
    "mlx.core._FastMethod", sizeof(FastOp), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR
#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
        | Py_TPFLAGS_DISALLOW_INSTANTIATION
#endif
    , fastmethod_slots,
};
static PyTypeObject *fastmethod_type;

static void *fn_address(PyObject *addr) {
    void *fn = PyLong_AsVoidPtr(addr);
    if (fn == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "null C function");
    return fn;
}

/* fast_op(fallback, arity, fn_address, weak) */
static PyObject *m_fast_op(PyObject *m, PyObject *args) {
    PyObject *fallback, *addr;
    int arity, weak;
    if (!PyArg_ParseTuple(args, "OiOp", &fallback, &arity, &addr, &weak)) return NULL;
    if (!ready || (arity != 1 && arity != 2) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_ValueError, "fast_op: setup() first, arity 1 or 2, a callable");
        return NULL;
    }
    void *fn = fn_address(addr);
    if (fn == NULL) return NULL;
    FastOp *f = PyObject_New(FastOp, fastop_type);
    if (f == NULL) return NULL;
    memset((char *)f + offsetof(FastOp, vectorcall), 0, sizeof(FastOp) - offsetof(FastOp, vectorcall));
    f->vectorcall = fastop_vectorcall;
    Py_INCREF(fallback);
    f->fallback = fallback;
    f->fn = fn;
    f->arity = arity;
    f->weak = weak;
    return (PyObject *)f;
}

/* fast_args_op(fallback, names, defaults, npos, axis, variants, method, varargs): an op of one
 * array and the Python parameters `names` (defaults: a tuple of (value,) or () for a required
 * one; the first npos may be positional; `axis` the index of the one choosing the variant, or
 * -1), `variants` three items (None, int, sequence axis) each None or (fn_address, pattern
 * index, tuple of parameter indices per C parameter). `method`: the descriptor flavour whose
 * first argument is the bound array; `varargs`: its ints may come as *args. */
static PyObject *m_fast_args_op(PyObject *m, PyObject *args) {
    PyObject *fallback, *names, *defaults, *variants;
    int npos, axis, method, varargs;
    if (!PyArg_ParseTuple(args, "OO!O!iiO!pp", &fallback, &PyTuple_Type, &names, &PyTuple_Type, &defaults, &npos, &axis,
                          &PyTuple_Type, &variants, &method, &varargs))
        return NULL;
    Py_ssize_t np = PyTuple_GET_SIZE(names);
    if (!ready || !PyCallable_Check(fallback) || np > ARGS_MAX || PyTuple_GET_SIZE(defaults) != np || npos < 0 ||
        npos > np || axis < -1 || axis >= np || PyTuple_GET_SIZE(variants) != V_COUNT) {
        PyErr_SetString(PyExc_ValueError, "fast_args_op: setup() first, or bad arguments");
        return NULL;
    }
    FastOp *f = PyObject_New(FastOp, method ? fastmethod_type : fastop_type);
    if (f == NULL) return NULL;
    memset((char *)f + offsetof(FastOp, vectorcall), 0, sizeof(FastOp) - offsetof(FastOp, vectorcall));
    f->vectorcall = fastop_vectorcall;
    f->fallback = Py_NewRef(fallback);
    f->np = (int)np, f->npos = npos, f->axis = axis, f->varargs = varargs;
    for (Py_ssize_t j = 0; j < np; j++) {
        PyObject *name = PyTuple_GET_ITEM(names, j), *d = PyTuple_GET_ITEM(defaults, j);
        if (!PyUnicode_CheckExact(name) || !PyTuple_Check(d) || PyTuple_GET_SIZE(d) > 1) goto bad;
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name);
        f->names[j] = name;
        f->defaults[j] = PyTuple_GET_SIZE(d) ? Py_NewRef(PyTuple_GET_ITEM(d, 0)) : NULL;
    }
    for (int i = 0; i < V_COUNT; i++) {
        PyObject *v = PyTuple_GET_ITEM(variants, i), *addr, *src;
        int pat;
        if (v == Py_None) continue;
        if (!PyArg_ParseTuple(v, "OiO!", &addr, &pat, &PyTuple_Type, &src)) goto fail;
        int npat = 0;
        while (patterns[npat]) npat++;
        if (pat < 0 || pat >= npat || PyTuple_GET_SIZE(src) != (Py_ssize_t)strlen(patterns[pat])) goto bad;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(src); k++) {
            long j = PyLong_AsLong(PyTuple_GET_ITEM(src, k));
            if (j < 0 || j >= np) goto bad;
            f->var[i].src[k] = (int)j;
        }
        if ((f->var[i].fn = fn_address(addr)) == NULL) goto fail;
        f->var[i].pat = pat;
    }
    return (PyObject *)f;
bad:
    PyErr_SetString(PyExc_ValueError, "fast_args_op: bad names, defaults or variants");
fail:
    Py_DECREF(f);
    return NULL;
}

/* ---- operator slots ----------------------------------------------------------------------- */

/* One entry per operator slot: its C op and the Python methods (__op__, __rop__ or NULL) that
 * handle everything else. */
typedef struct {
    binary_fn fn;
    PyObject *op, *rop;
    int weak;
} Binop;

enum { B_ADD, B_SUB, B_MUL, B_TRUEDIV, B_FLOORDIV, B_MOD, B_POW, B_MATMUL, B_COUNT };
static const char *const binop_names[B_COUNT] = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                                 "matmul"};
static Binop binops[B_COUNT];

static PyObject *binop_slot(int i, PyObject *x, PyObject *y) {
    Binop *b = &binops[i];
    PyObject *r = binary_fast(b->fn, x, y, b->weak);
    if (r != NULL || PyErr_Occurred()) return r;
    if (PyObject_TypeCheck(x, array_type)) return PyObject_CallFunctionObjArgs(b->op, x, y, NULL);
    if (b->rop != NULL && PyObject_TypeCheck(y, array_type)) return PyObject_CallFunctionObjArgs(b->rop, y, x, NULL);
    Py_RETURN_NOTIMPLEMENTED;
}

#define BINOP_SLOT(NAME, I) \
    static PyObject *slot_##NAME(PyObject *x, PyObject *y) { return binop_slot(I, x, y); }
BINOP_SLOT(add, B_ADD)
BINOP_SLOT(sub, B_SUB)
BINOP_SLOT(mul, B_MUL)
BINOP_SLOT(truediv, B_TRUEDIV)
BINOP_SLOT(floordiv, B_FLOORDIV)
BINOP_SLOT(mod, B_MOD)
BINOP_SLOT(matmul, B_MATMUL)

static PyObject *slot_pow(PyObject *x, PyObject *y, PyObject *z) {
    if (z == Py_None) return binop_slot(B_POW, x, y);
    if (PyObject_TypeCheck(x, array_type)) return PyObject_CallFunctionObjArgs(binops[B_POW].op, x, y, z, NULL);
    Py_RETURN_NOTIMPLEMENTED;
}

/* install_binop(name, fn_address, op, rop, weak): array's slot for operator `name` (add, sub,
 * mul, truediv, floordiv, mod, pow, matmul) becomes the fast one (with a Python scalar operand
 * too when `weak`). Called after every Python-level operator
 * is set on the type (setting one later resets its slot to the Python method). */
static PyObject *m_install_binop(PyObject *m, PyObject *args) {
    const char *name;
    PyObject *addr, *op, *rop;
    int weak;
    if (!PyArg_ParseTuple(args, "sOOOp", &name, &addr, &op, &rop, &weak)) return NULL;
    if (!ready) {
        PyErr_SetString(PyExc_ValueError, "install_binop: setup() first");
        return NULL;
    }
    int i = 0;
    while (i < B_COUNT && strcmp(binop_names[i], name) != 0) i++;
    if (i == B_COUNT) {
        PyErr_Format(PyExc_ValueError, "install_binop: no slot for operator %s", name);
        return NULL;
    }
    void *fn = fn_address(addr);
    if (fn == NULL) return NULL;
    Py_XSETREF(binops[i].op, (Py_INCREF(op), op));
    Py_XSETREF(binops[i].rop, rop == Py_None ? NULL : (Py_INCREF(rop), rop));
    binops[i].fn = (binary_fn)fn;
    binops[i].weak = weak;
    PyNumberMethods *nb = &((PyHeapTypeObject *)array_type)->as_number;
    switch (i) {
    case B_ADD: nb->nb_add = slot_add; break;
    case B_SUB: nb->nb_subtract = slot_sub; break;
    case B_MUL: nb->nb_multiply = slot_mul; break;
    case B_TRUEDIV: nb->nb_true_divide = slot_truediv; break;
    case B_FLOORDIV: nb->nb_floor_divide = slot_floordiv; break;
    case B_MOD: nb->nb_remainder = slot_mod; break;
    case B_POW: nb->nb_power = slot_pow; break;
    case B_MATMUL: nb->nb_matrix_multiply = slot_matmul; break;
    }
    PyType_Modified(array_type);
    Py_RETURN_NONE;
}

/* ---- basic indexing ------------------------------------------------------------------------ */

/* a[idx] for an index of Python ints, int slices, None and ... (_basic_index.encode's form, one
 * mlx_arm_index_basic call); any other index, or one the C call refuses (out of range...), goes
 * to the Python __getitem__, which gives the other results and MLX's errors. */
#define INDEX_MAX 64
static PyObject *py_getitem;

/* Appends the int v to spec; 0 when it is not a Python int of int64's range. */
static int spec_int(PyObject *v, int64_t *out) {
    if (Py_TYPE(v) != &PyLong_Type) return 0;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = x;
    return 1;
}

/* One index item into spec at *n; 0 when not encodable. */
static int spec_item(PyObject *i, int64_t *spec, size_t *n) {
    if (*n + 4 > INDEX_MAX) return 0;
    if (Py_TYPE(i) == &PyLong_Type) {
        spec[(*n)++] = 0;
        return spec_int(i, &spec[(*n)++]);
    }
    if (i == Py_None) {
        spec[(*n)++] = 1;
        return 1;
    }
    if (i == Py_Ellipsis) {
        spec[(*n)++] = 2;
        return 1;
    }
    if (Py_TYPE(i) == &PySlice_Type) {
        PySliceObject *sl = (PySliceObject *)i;
        PyObject *parts[3] = {sl->start, sl->stop, sl->step};
        int64_t flags = 8;
        size_t at = (*n)++;
        for (int k = 0; k < 3; k++) {
            int64_t v = 0;
            if (parts[k] != Py_None) {
                if (!spec_int(parts[k], &v)) return 0;
                flags |= (int64_t)1 << k;
            }
            spec[(*n)++] = v;
        }
        spec[at] = flags;
        return 1;
    }
    return 0;
}

/* The whole index (one item or a tuple of them) into spec, *n entries; 0 when not encodable. */
static int encode_index(PyObject *idx, int64_t *spec, size_t *n) {
    if (!PyTuple_CheckExact(idx)) return spec_item(idx, spec, n);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(idx); k++)
        if (!spec_item(PyTuple_GET_ITEM(idx, k), spec, n)) return 0;
    return 1;
}

static PyObject *slot_getitem(PyObject *self, PyObject *idx) {
    CArray *a = (CArray *)self;
    if (Py_TYPE(self) == array_type && a->h.ctx != NULL && on_main_thread()) {
        int64_t spec[INDEX_MAX];
        size_t n = 0;
        if (encode_index(idx, spec, &n)) {
            mlx_array r = {NULL};
            if (mlx_arm_index_basic(&r, a->h, spec, n, main_stream) == 0) return new_array(r);
            if (r.ctx != NULL) mlx_array_free(r);
            mlx_arm_clear_last_error();
        }
    }
    return PyObject_CallFunctionObjArgs(py_getitem, self, idx, NULL);
}

static PyObject *getitem_method(PyObject *self, PyObject *idx) { return slot_getitem(self, idx); }

static PyMethodDef getitem_def = {"__getitem__", getitem_method, METH_O, "Return self[key]."};

/* install_getitem(py_getitem): array's `a[idx]` slot becomes slot_getitem (after __getitem__ is
 * set on the type: setting it later resets the slot). The type's __getitem__ entry becomes a
 * C method calling the same, written into the dict directly (not through setattr, which
 * would reset the slot): CPython 3.11's specializing interpreter turns `a[i]` on a heap type
 * whose __getitem__ is a Python function into a direct call of that function, bypassing the
 * slot (measured: x[..., i:i+1, :] 3.7 µs through it, ~1 µs through the slot). */
static PyObject *m_install_getitem(PyObject *m, PyObject *fn) {
    if (!ready || !PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_ValueError, "install_getitem: setup() first, a callable");
        return NULL;
    }
    Py_INCREF(fn);
    Py_XSETREF(py_getitem, fn);
    PyObject *descr = PyDescr_NewMethod(array_type, &getitem_def);
    if (descr == NULL) return NULL;
    int rc = PyDict_SetItemString(array_type->tp_dict, "__getitem__", descr);
    Py_DECREF(descr);
    if (rc < 0) return NULL;
    ((PyHeapTypeObject *)array_type)->as_mapping.mp_subscript = slot_getitem;
    PyType_Modified(array_type);
    Py_RETURN_NONE;
}

/* a[idx] = v for the same index form and v an array (exactly mx.array) or a Python scalar that
 * weak_scalar takes: one mlx_arm_index_basic_update, which rebinds a's handle in place (shape
 * and dtype are kept, so the cached ones stay right; a failure leaves the handle untouched).
 * Any other index or value, a failing call (out of range, an update that does not broadcast),
 * another thread or a shapeless compile trace running (shapeless[0] != 0: the Python path
 * keeps a node for an empty window there) goes to the Python __setitem__, the reference,
 * which does it or raises MLX's error. `del a[idx]` goes to the slot the type had. */
static PyObject *py_setitem, *shapeless;
static objobjargproc orig_ass_subscript;

static int in_shapeless_trace(void) {
    PyObject *k = PyList_GET_SIZE(shapeless) > 0 ? PyList_GET_ITEM(shapeless, 0) : NULL;
    return k == NULL || Py_TYPE(k) != &PyLong_Type || PyLong_AsLong(k) != 0;
}

static int slot_setitem(PyObject *self, PyObject *idx, PyObject *value) {
    if (value == NULL) return orig_ass_subscript(self, idx, value);
    CArray *a = (CArray *)self;
    if (Py_TYPE(self) == array_type && a->h.ctx != NULL && on_main_thread() && !in_shapeless_trace()) {
        mlx_array v = {NULL};
        if (Py_TYPE(value) == array_type) {
            v = ((CArray *)value)->h;
        } else if (!weak_scalar(value, mlx_array_dtype(a->h), &v)) {
            v.ctx = NULL;
        }
        if (PyErr_Occurred()) PyErr_Clear(); /* (weak_scalar's own failure: the Python path) */
        if (v.ctx != NULL) {
            int64_t spec[INDEX_MAX];
            size_t n = 0;
            if (encode_index(idx, spec, &n)) {
                if (mlx_arm_index_basic_update(&a->h, a->h, v, spec, n, main_stream) == 0) return 0;
                mlx_arm_clear_last_error();
            }
        }
    }
    PyObject *r = PyObject_CallFunctionObjArgs(py_setitem, self, idx, value, NULL);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

static PyObject *setitem_method(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    if (n != 2) {
        PyErr_Format(PyExc_TypeError, "__setitem__ expected 2 arguments, got %zd", n);
        return NULL;
    }
    if (slot_setitem(self, args[0], args[1]) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef setitem_def = {"__setitem__", (PyCFunction)(void (*)(void))setitem_method, METH_FASTCALL,
                                  "Set self[key] to value."};

/* install_setitem(py_setitem, shapeless): array's `a[idx] = v` slot becomes slot_setitem and
 * its __setitem__ entry a C method calling it (written into the dict as install_getitem does,
 * so that no later specialization of the interpreter can call the Python function directly). */
static PyObject *m_install_setitem(PyObject *m, PyObject *args) {
    PyObject *fn, *traces;
    if (!PyArg_ParseTuple(args, "OO!", &fn, &PyList_Type, &traces)) return NULL;
    if (!ready || !PyCallable_Check(fn) || PyList_GET_SIZE(traces) < 1) {
        PyErr_SetString(PyExc_ValueError, "install_setitem: setup() first, a callable, a non-empty list");
        return NULL;
    }
    PyMappingMethods *mp = &((PyHeapTypeObject *)array_type)->as_mapping;
    if (mp->mp_ass_subscript == NULL || (py_setitem == NULL && mp->mp_ass_subscript == slot_setitem)) {
        PyErr_SetString(PyExc_ValueError, "install_setitem: the type has no __setitem__ slot");
        return NULL;
    }
    PyObject *descr = PyDescr_NewMethod(array_type, &setitem_def);
    if (descr == NULL) return NULL;
    int rc = PyDict_SetItemString(array_type->tp_dict, "__setitem__", descr);
    Py_DECREF(descr);
    if (rc < 0) return NULL;
    Py_XSETREF(py_setitem, Py_NewRef(fn));
    Py_XSETREF(shapeless, Py_NewRef(traces));
    if (mp->mp_ass_subscript != slot_setitem) orig_ass_subscript = mp->mp_ass_subscript;
    mp->mp_ass_subscript = slot_setitem;
    PyType_Modified(array_type);
    Py_RETURN_NONE;
}

/* ---- item() ------------------------------------------------------------------------------ */

/* a.item() for the dtypes with a direct C read (bool, ints, float32/64), as _array.array.item:
 * an evaluation releases the GIL. Half precision, complex, another thread's stream in use
 * (stream_owners not empty: the Python check is needed) and any failure (size not 1...) go to
 * the Python method, which gives the value or MLX's error. */
static PyObject *py_item, *stream_owners;

/* The array's dtype through the object's Dtype cache (the `dtype` getter's; rebinding clears
 * it): found by a pointer compare against the few Dtypes, cheaper than asking the library;
 * filled from the library when empty. */
static mlx_dtype cached_dtype(CArray *a) {
    Py_ssize_t n = PyTuple_GET_SIZE(dtypes);
    if (a->d != NULL) {
        for (Py_ssize_t k = 0; k < n; k++)
            if (PyTuple_GET_ITEM(dtypes, k) == a->d) return (mlx_dtype)k;
    }
    mlx_dtype dt = mlx_array_dtype(a->h);
    if (a->d == NULL && (int)dt >= 0 && (Py_ssize_t)dt < n && PyTuple_GET_ITEM(dtypes, dt) != Py_None)
        a->d = Py_NewRef(PyTuple_GET_ITEM(dtypes, dt));
    return dt;
}

static PyObject *item_fast(PyObject *self, PyObject *unused) {
    CArray *a = (CArray *)self;
    if (Py_TYPE(self) == array_type && a->h.ctx != NULL && PySet_GET_SIZE(stream_owners) == 0) {
        mlx_array h = a->h;
        union {
            bool b;
            uint8_t u8;
            uint16_t u16;
            uint32_t u32;
            uint64_t u64;
            int8_t i8;
            int16_t i16;
            int32_t i32;
            int64_t i64;
            float f32;
            double f64;
        } v;
        int rc, called = 1;
        mlx_dtype dt;
        /* An array already computed: one library call reads it, without releasing the GIL
         * (nothing to wait for) and without a second guarded call asking whether it is. */
        rc = mlx_arm_array_item_computed(&v, &dt, h);
        if (rc == 0) goto have_value;
        if (rc > 0) {
            mlx_arm_clear_last_error(); /* (the Python method calls again for its error) */
            return PyObject_CallOneArg(py_item, self);
        }
        /* Not computed yet (or half precision / complex): evaluate with the GIL released. */
        dt = cached_dtype(a);
        rc = -1;
        PyThreadState *ts = PyEval_SaveThread();
        switch (dt) {
        case MLX_BOOL: rc = mlx_array_item_bool(&v.b, h); break;
        case MLX_UINT8: rc = mlx_array_item_uint8(&v.u8, h); break;
        case MLX_UINT16: rc = mlx_array_item_uint16(&v.u16, h); break;
        case MLX_UINT32: rc = mlx_array_item_uint32(&v.u32, h); break;
        case MLX_UINT64: rc = mlx_array_item_uint64(&v.u64, h); break;
        case MLX_INT8: rc = mlx_array_item_int8(&v.i8, h); break;
        case MLX_INT16: rc = mlx_array_item_int16(&v.i16, h); break;
        case MLX_INT32: rc = mlx_array_item_int32(&v.i32, h); break;
        case MLX_INT64: rc = mlx_array_item_int64(&v.i64, h); break;
        case MLX_FLOAT32: rc = mlx_array_item_float32(&v.f32, h); break;
        case MLX_FLOAT64: rc = mlx_array_item_float64(&v.f64, h); break;
        default: called = 0; break;
        }
        PyEval_RestoreThread(ts);
        if (rc == 0) {
        have_value:
            switch (dt) {
            case MLX_BOOL: return PyBool_FromLong(v.b);
            case MLX_UINT8: return PyLong_FromLong(v.u8);
            case MLX_UINT16: return PyLong_FromLong(v.u16);
            case MLX_UINT32: return PyLong_FromUnsignedLong(v.u32);
            case MLX_UINT64: return PyLong_FromUnsignedLongLong(v.u64);
            case MLX_INT8: return PyLong_FromLong(v.i8);
            case MLX_INT16: return PyLong_FromLong(v.i16);
            case MLX_INT32: return PyLong_FromLong(v.i32);
            case MLX_INT64: return PyLong_FromLongLong(v.i64);
            case MLX_FLOAT32: return PyFloat_FromDouble(v.f32);
            case MLX_FLOAT64: return PyFloat_FromDouble(v.f64);
            default: break;
            }
        }
        if (called) mlx_arm_clear_last_error(); /* (the Python method calls again for its error) */
    }
    return PyObject_CallOneArg(py_item, self);
}

static PyMethodDef item_def = {"item", item_fast, METH_NOARGS, "The value of a one-element array as a Python scalar."};

/* install_item(py_item, stream_owners): array.item becomes item_fast (a method descriptor). */
static PyObject *m_install_item(PyObject *m, PyObject *args) {
    PyObject *fn, *owners;
    if (!PyArg_ParseTuple(args, "OO!", &fn, &PySet_Type, &owners)) return NULL;
    if (!ready || !PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_ValueError, "install_item: setup() first, a callable");
        return NULL;
    }
    PyObject *descr = PyDescr_NewMethod(array_type, &item_def);
    if (descr == NULL) return NULL;
    Py_XSETREF(py_item, Py_NewRef(fn));
    Py_XSETREF(stream_owners, Py_NewRef(owners));
    int rc = PyObject_SetAttrString((PyObject *)array_type, "item", descr);
    Py_DECREF(descr);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- mx.array(list) ------------------------------------------------------------------------ */

/* mx.array(v) for a non-empty list, nested to any depth in lists/tuples, of Python bools, ints
 * and floats, as _array._from_list gives it: any float -> float32; else any int -> int32, or
 * int64 when a value is beyond int32; else bool. Every other construction — a dtype, arrays
 * or complex or other objects inside, a ragged or empty list (MLX's ValueError), an int beyond
 * int64 — goes to the Python __init__ (orig_init, the slot it set), the reference. */
static initproc orig_init;

#define LIST_STACK 64
#define LIST_DEPTH 32

/* One leaf as read: its value as a double (what a float array is made from, ints converted as
 * Python's float(int) does) and as an int64 (ints and bools). */
typedef struct {
    double d;
    int64_t i;
} list_leaf;

typedef struct {
    int shape[LIST_DEPTH];
    int ndim;
    list_leaf *leaf;
    Py_ssize_t at;
    int any_float, any_int;
    int64_t lo, hi;
} list_walk;

/* Reads v (at depth `depth`) into w; 0 when v is not a regular list of plain numbers. */
static int list_read(list_walk *w, PyObject *v, int depth) {
    if (!PyList_CheckExact(v) && !PyTuple_CheckExact(v)) return 0;
    Py_ssize_t len = Py_SIZE(v);
    if (len != w->shape[depth]) return 0;
    PyObject **items = PySequence_Fast_ITEMS(v);
    if (depth + 1 < w->ndim) {
        for (Py_ssize_t k = 0; k < len; k++)
            if (!list_read(w, items[k], depth + 1)) return 0;
        return 1;
    }
    for (Py_ssize_t k = 0; k < len; k++) {
        PyObject *x = items[k];
        PyTypeObject *t = Py_TYPE(x);
        list_leaf *l = &w->leaf[w->at++];
        if (t == &PyFloat_Type) {
            l->d = PyFloat_AS_DOUBLE(x);
            w->any_float = 1;
        } else if (t == &PyBool_Type) {
            l->i = x == Py_True;
            l->d = (double)l->i;
        } else if (t == &PyLong_Type) {
            int overflow = 0;
            long long y = PyLong_AsLongLongAndOverflow(x, &overflow);
            if (overflow) return 0;
            l->i = y;
            l->d = (double)y; /* (correctly rounded, as PyLong_AsDouble) */
            w->any_int = 1;
            if (y < w->lo) w->lo = y;
            if (y > w->hi) w->hi = y;
        } else {
            return 0;
        }
    }
    return 1;
}

static int init_fast(PyObject *self, PyObject *args, PyObject *kwds) {
    CArray *a = (CArray *)self;
    if (Py_TYPE(self) != array_type || a->h.ctx != NULL || PyTuple_GET_SIZE(args) != 1 ||
        (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) || !PyList_CheckExact(PyTuple_GET_ITEM(args, 0)))
        return orig_init(self, args, kwds);
    PyObject *v = PyTuple_GET_ITEM(args, 0);
    list_walk w = {.ndim = 0, .at = 0, .any_float = 0, .any_int = 0, .lo = 0, .hi = 0};
    /* The shape, from the first element at each depth (list_read checks every other). */
    Py_ssize_t n = 1;
    for (PyObject *cur = v; PyList_CheckExact(cur) || PyTuple_CheckExact(cur);) {
        Py_ssize_t len = Py_SIZE(cur);
        if (w.ndim == LIST_DEPTH || len == 0 || len > INT32_MAX || n > PY_SSIZE_T_MAX / 16 / len)
            return orig_init(self, args, kwds);
        w.shape[w.ndim++] = (int)len;
        n *= len;
        cur = PySequence_Fast_ITEMS(cur)[0];
    }
    list_leaf stack[LIST_STACK];
    w.leaf = stack;
    if (n > LIST_STACK && (w.leaf = PyMem_Malloc((size_t)n * sizeof *w.leaf)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int ok = list_read(&w, v, 0) && w.at == n;
    mlx_dtype dt = w.any_float ? MLX_FLOAT32
                   : w.any_int ? (w.lo >= INT32_MIN && w.hi <= INT32_MAX ? MLX_INT32 : MLX_INT64)
                               : MLX_BOOL;
    int rc = 1;
    if (ok) {
        int64_t out_stack[LIST_STACK];
        void *out = n > LIST_STACK ? PyMem_Malloc((size_t)n * 8) : out_stack;
        if (out == NULL) {
            if (w.leaf != stack) PyMem_Free(w.leaf);
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t k = 0; k < n; k++) {
            list_leaf l = w.leaf[k];
            switch (dt) {
            case MLX_FLOAT32: ((float *)out)[k] = (float)l.d; break; /* (beyond float32: inf, as MLX) */
            case MLX_INT32: ((int32_t *)out)[k] = (int32_t)l.i; break;
            case MLX_INT64: ((int64_t *)out)[k] = l.i; break;
            default: ((bool *)out)[k] = l.i != 0; break;
            }
        }
        rc = mlx_array_set_data(&a->h, out, w.shape, w.ndim, dt);
        if (out != out_stack) PyMem_Free(out);
    }
    if (w.leaf != stack) PyMem_Free(w.leaf);
    if (!ok) return orig_init(self, args, kwds);
    if (rc != 0) {
        if (a->h.ctx != NULL) mlx_array_free(a->h);
        a->h.ctx = NULL;
        raise_last_error();
        return -1;
    }
    return 0;
}

/* install_init(): array(...)'s init slot becomes init_fast, after __init__ is set on the type. */
static PyObject *m_install_init(PyObject *m, PyObject *unused) {
    if (!ready || array_type->tp_init == NULL || array_type->tp_init == init_fast) {
        PyErr_SetString(PyExc_ValueError, "install_init: setup() first, once");
        return NULL;
    }
    orig_init = array_type->tp_init;
    array_type->tp_init = init_fast;
    PyType_Modified(array_type);
    Py_RETURN_NONE;
}

/* ---- module functions --------------------------------------------------------------------- */

static PyType_Slot carray_slots[] = {
    {Py_tp_dealloc, carray_dealloc},
    {Py_tp_getset, carray_getset},
    {Py_tp_members, carray_members},
    {0, NULL},
};

static PyType_Spec carray_spec = {
    "mlx.core.array", sizeof(CArray), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, carray_slots,
};

/* make_type(bases): the array type (instances hold the handle), derived from `bases` (the
 * buffer-protocol base); the caller copies the Python class's methods onto it. */
static PyObject *m_make_type(PyObject *m, PyObject *bases) {
    if (array_type != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "make_type: the array type exists already");
        return NULL;
    }
    if (!PyTuple_Check(bases)) {
        PyErr_SetString(PyExc_TypeError, "make_type: a tuple of bases");
        return NULL;
    }
    PyObject *t = PyType_FromSpecWithBases(&carray_spec, bases);
    if (t == NULL) return NULL;
    array_type = (PyTypeObject *)t;
    Py_INCREF(t); /* (module state: kept for the process) */
    return t;
}

/* setup(arr_ptr_ctype, stream_ctype, dtypes_by_code, error_fn, stream): after make_type. */
static PyObject *m_setup(PyObject *m, PyObject *args) {
    PyObject *apt, *sct, *dt, *err, *stream;
    if (!PyArg_ParseTuple(args, "OOO!OO", &apt, &sct, &PyTuple_Type, &dt, &err, &stream)) return NULL;
    if (array_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "setup: make_type() first");
        return NULL;
    }
    Py_INCREF(apt), Py_INCREF(sct), Py_INCREF(dt), Py_INCREF(err);
    arr_ptr_ct = apt, stream_ct = sct, dtypes = dt, error_fn = err;
    if (cffi_to_c((char *)&main_stream, stream_ct, stream) < 0) return NULL;
    main_thread = PyThread_get_thread_ident();
    ready = 1;
    Py_RETURN_NONE;
}

/* set_stream(stream): the importing thread's current stream changed (mx.stream, set_default_stream). */
static PyObject *m_set_stream(PyObject *m, PyObject *stream) {
    mlx_stream s;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "set_stream: setup() first");
        return NULL;
    }
    if (cffi_to_c((char *)&s, stream_ct, stream) < 0) return NULL;
    main_stream = s;
    Py_RETURN_NONE;
}

/* wrap(ptr): a new array taking over the handle at the cffi 'mlx_array *' ptr. */
static PyObject *m_wrap(PyObject *m, PyObject *ptr) {
    char *p = cffi_to_c_pointer(ptr, arr_ptr_ct);
    if (p == NULL) return null_pointer(), NULL;
    mlx_array h;
    memcpy(&h, p, sizeof h);
    return new_array(h);
}

static PyMethodDef methods[] = {
    {"make_type", m_make_type, METH_O, "make_type(bases) -> the array type"},
    {"setup", m_setup, METH_VARARGS, "setup(arr_ptr_ctype, stream_ctype, dtypes, error_fn, stream)"},
    {"set_stream", m_set_stream, METH_O, "set_stream(stream): the importing thread's stream"},
    {"wrap", m_wrap, METH_O, "wrap(ptr) -> an array owning the handle at ptr"},
    {"fast_op", m_fast_op, METH_VARARGS, "fast_op(fallback, arity, fn_address, weak)"},
    {"fast_args_op", m_fast_args_op, METH_VARARGS,
     "fast_args_op(fallback, names, defaults, npos, axis, variants, method, varargs)"},
    {"install_binop", m_install_binop, METH_VARARGS, "install_binop(name, fn_address, op, rop, weak)"},
    {"install_item", m_install_item, METH_VARARGS, "install_item(py_item, stream_owners)"},
    {"install_init", m_install_init, METH_NOARGS, "install_init()"},
    {"install_getitem", m_install_getitem, METH_O, "install_getitem(py_getitem)"},
    {"install_setitem", m_install_setitem, METH_VARARGS, "install_setitem(py_setitem, shapeless_traces)"},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mlx_carray", NULL, -1, methods};

PyMODINIT_FUNC PyInit__mlx_carray(void) {
    PyObject *backend = PyImport_ImportModule("_cffi_backend");
    if (backend == NULL) return NULL;
    PyObject *capi = PyObject_GetAttrString(backend, "_C_API");
    Py_DECREF(backend);
    if (capi == NULL) return NULL;
    void *table = PyCapsule_GetPointer(capi, "cffi");
    Py_DECREF(capi);
    if (table == NULL) return NULL;
    memcpy(cffi_api, table, sizeof cffi_api);
    fastop_type = (PyTypeObject *)PyType_FromSpec(&fastop_spec);
    if (fastop_type == NULL) return NULL;
    fastmethod_type = (PyTypeObject *)PyType_FromSpec(&fastmethod_spec);
    if (fastmethod_type == NULL) return NULL;
    PyObject *pats = PyTuple_New(sizeof patterns / sizeof patterns[0] - 1);
    if (pats == NULL) return NULL;
    for (Py_ssize_t k = 0; patterns[k]; k++) {
        PyObject *t = PyUnicode_FromString(patterns[k]);
        if (t == NULL) return Py_DECREF(pats), NULL;
        PyTuple_SET_ITEM(pats, k, t);
    }
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL) return NULL;
    if (PyModule_AddIntConstant(mod, "MLX_ARM_CDEF_STAMP", (long)MLX_ARM_CDEF_STAMP) < 0 ||
        PyModule_AddIntConstant(mod, "VERSION", CARRAY_VERSION) < 0 ||
        PyModule_AddObjectRef(mod, "FastOp", (PyObject *)fastop_type) < 0 ||
        PyModule_AddObjectRef(mod, "FastMethod", (PyObject *)fastmethod_type) < 0 ||
        PyModule_AddObject(mod, "PATTERNS", pats) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
