"""``mlx.arm.Model``: Llama-family language models (GGUF files, MLX / Hugging Face model
directories) over the C API's ``mlx_arm_model_*`` and ``mlx_arm_generate*`` functions.

Generation runs inside the C library (prompt, KV cache, sampling); Python sees the text as it
is produced through a callback. The iterator form runs the generation on a worker thread (the
C call releases the GIL) and hands pieces over through a queue, so breaking out of the loop
stops the generation at the next token.
"""
import os
import queue
import threading

from ..core._ffi import check, error, ffi, lib

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# The C library's stop_reason codes.
_STOP_REASONS = {0: "stop", 1: "length", 2: "callback", 3: "context"}


def model_dir():
    """Where models are looked for by default: ``$MLX_ARM_MODEL_DIR``, else
    ``~/.cache/mlx-arm/models`` (where ``scripts/setup.sh`` installs the default model)."""
    d = os.environ.get("MLX_ARM_MODEL_DIR")
    if d:
        return d
    return os.path.join(os.path.expanduser("~"), ".cache", "mlx-arm", "models")


def default_model_path():
    """The default model's path (SmolLM2-135M-Instruct, Q4_1)."""
    return os.path.join(model_dir(), DEFAULT_MODEL_FILE)


def _take_string(s):
    """The text of an ``mlx_string*`` result, which is then freed."""
    try:
        p = lib.mlx_string_data(s[0])
        return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""
    finally:
        lib.mlx_string_free(s[0])


def _take_ids(v):
    """The ints of an ``mlx_vector_int*`` result, which is then freed."""
    try:
        n = lib.mlx_vector_int_size(v[0])
        out = ffi.new("int*")
        ids = []
        for i in range(n):
            check(lib.mlx_vector_int_get(out, v[0], i))
            ids.append(out[0])
        return ids
    finally:
        lib.mlx_vector_int_free(v[0])


def _ids_arg(ids, what):
    """A C int array from a sequence of token ids (checked here for a clear TypeError/ValueError)."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"{what}: expected a sequence of int token ids, got {type(ids).__name__}")
    vals = []
    for t in ids:
        if isinstance(t, bool) or not isinstance(t, int):
            try:
                import numpy as np  # numpy ints are fine

                if isinstance(t, np.integer):
                    t = int(t)
                else:
                    raise TypeError
            except (ImportError, TypeError):
                raise TypeError(f"{what}: token ids must be ints, got {type(t).__name__}") from None
        if not -(2**31) <= t < 2**31:
            raise ValueError(f"{what}: token id {t} is out of range")
        vals.append(t)
    return ffi.new("int[]", vals) if vals else ffi.NULL, len(vals)


def _config(max_tokens, temp, top_k, top_p, min_p, repetition_penalty, repetition_context, seed):
    cfg = ffi.new("mlx_arm_generate_config*")
    cfg[0] = lib.mlx_arm_generate_config_default()
    for name, v in (("max_tokens", max_tokens), ("top_k", top_k), ("repetition_context", repetition_context)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"generate(): {name} must be an int, got {type(v).__name__}")
        if not 0 <= v < 2**31:
            raise ValueError(f"generate(): {name} must be in [0, 2**31), got {v}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"generate(): seed must be an int in [0, 2**64), got {seed!r}")
    cfg.max_tokens = max_tokens
    cfg.temperature = float(temp)
    cfg.top_k = top_k
    cfg.top_p = float(top_p)
    cfg.min_p = float(min_p)
    cfg.repetition_penalty = float(repetition_penalty)
    cfg.repetition_context = repetition_context
    cfg.seed = seed
    return cfg


def _messages(messages):
    """Roles and contents from ``[{"role": ..., "content": ...}]`` (or ``(role, content)`` pairs)."""
    if isinstance(messages, (str, bytes)) or not hasattr(messages, "__iter__"):
        raise TypeError("apply_chat_template(): messages must be a list of {'role', 'content'} dicts")
    roles, contents = [], []
    for m in messages:
        if isinstance(m, dict):
            if "role" not in m or "content" not in m:
                raise ValueError(f"apply_chat_template(): a message needs 'role' and 'content', got keys {sorted(m)}")
            r, c = m["role"], m["content"]
        elif isinstance(m, (tuple, list)) and len(m) == 2:
            r, c = m
        else:
            raise TypeError(f"apply_chat_template(): a message must be a dict or a (role, content) pair, got {type(m).__name__}")
        if not isinstance(r, str) or not isinstance(c, str):
            raise TypeError("apply_chat_template(): role and content must be str")
        roles.append(ffi.new("char[]", r.encode("utf-8")))
        contents.append(ffi.new("char[]", c.encode("utf-8")))
    return roles, contents


class Model:
    """A language model loaded by the C library. Use :meth:`load` (a ``.gguf`` file or a model
    directory; the default model when ``path`` is None) or :meth:`from_gguf_bytes`."""

    def __init__(self, _handle, _keep=None, path=None):
        self._h = _handle
        self._keep = _keep  # bytes the model views in place (from_gguf_bytes)
        self.path = path

    @classmethod
    def load(cls, path=None):
        """Loads ``path`` (a ``.gguf`` file or a model directory; default: the default model)."""
        if path is None:
            path = default_model_path()
            if not os.path.exists(path):
                raise FileNotFoundError(
                    f"the default model {path} is not installed: run scripts/setup.sh, or pass a .gguf file or model directory")
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"Model.load(): no such file or directory: {path!r}")
        h = ffi.new("mlx_arm_model*")
        h[0] = lib.mlx_arm_model_new()
        check(lib.mlx_arm_model_load(h, path.encode("utf-8")))
        return cls(h[0], path=path)

    @classmethod
    def from_gguf_bytes(cls, data):
        """A model from a GGUF image in memory (``bytes``/``bytearray``/buffer). The model
        views the bytes in place; it keeps a copy of them alive."""
        buf = ffi.from_buffer(bytes(data))
        h = ffi.new("mlx_arm_model*")
        h[0] = lib.mlx_arm_model_new()
        check(lib.mlx_arm_model_load_gguf_bytes(h, buf, len(buf)))
        return cls(h[0], _keep=buf)

    def _handle(self):
        if self._h is None:
            raise ValueError("the model is closed")
        return self._h

    def close(self):
        """Frees the model (also done when the object is collected)."""
        h, self._h = self._h, None
        if h is not None:
            lib.mlx_arm_model_free(h)
        self._keep = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        if self._h is None:
            return "Model(closed)"
        i = self.info
        return f"Model({i.get('arch')}, layers={i.get('layers')}, hidden={i.get('hidden')}, vocab={i.get('vocab')})"

    @property
    def info(self):
        """``mlx_arm_model_info`` as a dict (numbers as ints/floats)."""
        s = ffi.new("mlx_string*")
        check(lib.mlx_arm_model_info(s, self._handle()))
        out = {}
        for line in _take_string(s).splitlines():
            k, _, v = line.partition("=")
            for conv in (int, float):
                try:
                    v = conv(v)
                    break
                except ValueError:
                    pass
            out[k] = v
        return out

    def tokenize(self, text, add_special=True):
        """The token ids of ``text`` (``add_special``: the tokenizer's BOS rule)."""
        if not isinstance(text, str):
            raise TypeError(f"tokenize(): expected str, got {type(text).__name__}")
        v = ffi.new("mlx_vector_int*")
        v[0] = lib.mlx_vector_int_new()
        rc = lib.mlx_arm_model_tokenize(v, self._handle(), text.encode("utf-8"), bool(add_special))
        if rc:
            lib.mlx_vector_int_free(v[0])
            raise error()
        return _take_ids(v)

    def detokenize(self, ids):
        """The text of token ids."""
        p, n = _ids_arg(ids, "detokenize()")
        s = ffi.new("mlx_string*")
        check(lib.mlx_arm_model_detokenize(s, self._handle(), p, n))
        return _take_string(s)

    def apply_chat_template(self, messages, add_generation_prompt=True):
        """The prompt text for ``messages`` (``[{"role": "user", "content": "Hi"}]``) rendered
        with the model's chat template, as Hugging Face's ``apply_chat_template(tokenize=False)``."""
        roles, contents = _messages(messages)
        s = ffi.new("mlx_string*")
        r = ffi.new("char*[]", roles) if roles else ffi.NULL
        c = ffi.new("char*[]", contents) if contents else ffi.NULL
        check(lib.mlx_arm_model_apply_chat_template(s, self._handle(), r, c, len(roles), bool(add_generation_prompt)))
        return _take_string(s)

    @property
    def stats(self):
        """Figures of the last generation: prompt/generation tokens, tokens per second, seconds
        and why it stopped (``"stop"``, ``"length"``, ``"callback"``, ``"context"``)."""
        st = ffi.new("mlx_arm_generation_stats*")
        check(lib.mlx_arm_generate_stats(st, self._handle()))
        return {
            "prompt_tokens": st.prompt_tokens,
            "prompt_tps": st.prompt_tps,
            "prompt_seconds": st.prompt_seconds,
            "generation_tokens": st.generation_tokens,
            "generation_tps": st.generation_tps,
            "generation_seconds": st.generation_seconds,
            "stop_reason": _STOP_REASONS.get(st.stop_reason, str(st.stop_reason)),
        }

    def generate_ids(self, prompt_ids, max_tokens=256, temp=0.0, top_k=0, top_p=1.0, min_p=0.0,
                     repetition_penalty=1.0, repetition_context=64, seed=0):
        """Generates after token ids; returns the generated ids (no tokenizer involved)."""
        cfg = _config(max_tokens, temp, top_k, top_p, min_p, repetition_penalty, repetition_context, seed)
        p, n = _ids_arg(prompt_ids, "generate_ids()")
        v = ffi.new("mlx_vector_int*")
        v[0] = lib.mlx_vector_int_new()
        rc = lib.mlx_arm_generate_ids(v, self._handle(), p, n, cfg)
        if rc:
            lib.mlx_vector_int_free(v[0])
            raise error()
        return _take_ids(v)

    def _run(self, prompt, chat, cfg, on_piece):
        """One C generation; ``on_piece(text, token)`` returns False to stop. An exception
        raised by it stops the generation and is re-raised here."""
        if not isinstance(prompt, str):
            raise TypeError(f"generate(): prompt must be str, got {type(prompt).__name__}")
        raised = []

        def trampoline(piece, token, user):
            try:
                return bool(on_piece(ffi.string(piece).decode("utf-8", "replace"), token))
            except BaseException as e:  # noqa: BLE001 - handed back to the caller below
                raised.append(e)
                return False

        cb = ffi.callback("mlx_arm_generate_callback", trampoline) if on_piece is not None else ffi.NULL
        s = ffi.new("mlx_string*")
        rc = lib.mlx_arm_generate(s, self._handle(), prompt.encode("utf-8"), bool(chat), cfg, cb, ffi.NULL)
        if raised:
            if not rc:
                lib.mlx_string_free(s[0])
            raise raised[0]
        check(rc)
        return _take_string(s)

    def generate(self, prompt, max_tokens=256, temp=0.0, top_k=0, top_p=1.0, min_p=0.0,
                 repetition_penalty=1.0, repetition_context=64, seed=0, chat=True, stream=None):
        """Generates a reply to ``prompt`` (``chat=True``: the model's chat template applied to
        it as one user message; ``chat=False``: the text is continued).

        ``stream`` None returns the whole text; a callable is called with each piece of text
        as it is generated (returning False stops) and the whole text is returned; ``True``
        returns an iterator over the pieces (see :meth:`stream_generate`)."""
        cfg = _config(max_tokens, temp, top_k, top_p, min_p, repetition_penalty, repetition_context, seed)
        if stream is True:
            return self._iterate(prompt, chat, cfg)
        if stream is None or stream is False:
            return self._run(prompt, chat, cfg, None)
        if not callable(stream):
            raise TypeError("generate(): stream must be None, True or a callable")

        def on_piece(piece, token):
            return stream(piece) is not False

        return self._run(prompt, chat, cfg, on_piece)

    def stream_generate(self, prompt, **kwargs):
        """An iterator over the pieces of text of :meth:`generate` as they are produced."""
        return self.generate(prompt, stream=True, **kwargs)

    def _iterate(self, prompt, chat, cfg):
        if not isinstance(prompt, str):
            raise TypeError(f"generate(): prompt must be str, got {type(prompt).__name__}")
        self._handle()
        q = queue.Queue()
        stop = threading.Event()
        done = object()

        def work():
            try:
                self._run(prompt, chat, cfg, lambda piece, token: (q.put(piece), not stop.is_set())[1])
                q.put(done)
            except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
                q.put(e)

        def pieces():
            t = threading.Thread(target=work, name="mlx.arm generate", daemon=True)
            t.start()
            try:
                while True:
                    item = q.get()
                    if item is done:
                        return
                    if isinstance(item, BaseException):
                        raise item
                    if item:
                        yield item
            finally:
                stop.set()
                t.join()

        return pieces()
