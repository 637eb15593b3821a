"""``mx.device_info``: what MLX reports for the CPU device (its name and architecture)."""
import platform

from ._device import Device, DeviceType, default_device


def _cpu_name():
    """The processor's name as Linux reports it (``model name``, or ``Hardware``/``CPU part``
    lines on some ARM kernels); the platform's description elsewhere."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_info(d=None):
    """A dict of the device's properties: ``architecture`` and ``device_name`` for the CPU,
    as MLX's CPU build reports them. mlx-arm has no GPU device yet (ValueError)."""
    if d is None:
        d = default_device()
    if isinstance(d, DeviceType):
        d = Device(d)
    if not isinstance(d, Device):
        raise TypeError(f"device_info(): expected a Device or DeviceType, got {type(d).__name__}")
    if d.type != DeviceType.cpu:
        raise ValueError("[device_info] mlx-arm has no GPU device (no GPU backend yet).")
    return {"architecture": platform.machine(), "device_name": _cpu_name()}
