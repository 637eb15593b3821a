"""Writes chat_template.json: the default model's chat template (read from its GGUF file with
gguf-py) rendered by Hugging Face transformers' own renderer (`render_jinja_template`, the code
behind `tokenizer.apply_chat_template(..., tokenize=False)`, Jinja2 underneath) for a few
conversations. tests/python/test_arm_model.py compares mlx.arm.Model.apply_chat_template with it.

    /path/to/venv-with-transformers-and-gguf/bin/python tests/python/golden/lm/gen_chat_template.py [model.gguf]
"""
import json
import os
import sys

import gguf
from transformers.utils.chat_template_utils import render_jinja_template

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(os.environ.get("MLX_ARM_MODEL_DIR") or os.path.expanduser("~/.cache/mlx-arm/models"),
                       "SmolLM2-135M-Instruct.Q4_1.gguf")


def field_str(r, key):
    f = r.fields[key]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    r = gguf.GGUFReader(path)
    template = field_str(r, "tokenizer.chat_template")
    tokens = r.fields["tokenizer.ggml.tokens"]
    def tok(i):
        return bytes(tokens.parts[tokens.data[i]]).decode("utf-8")
    bos = tok(int(r.fields["tokenizer.ggml.bos_token_id"].parts[-1][0]))
    eos = tok(int(r.fields["tokenizer.ggml.eos_token_id"].parts[-1][0]))
    conversations = [
        ([{"role": "user", "content": "What is the capital of France?"}], True),
        ([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}], True),
        ([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
          {"role": "user", "content": "Tell me a joke about cats. 🐱 Ünïcödé"}], False),
    ]
    cases = []
    for messages, agp in conversations:
        text = render_jinja_template([messages], chat_template=template, add_generation_prompt=agp,
                                     bos_token=bos, eos_token=eos)[0][0]
        cases.append({"messages": messages, "add_generation_prompt": agp, "text": text})
    out = {"model": os.path.basename(path), "template": template, "bos_token": bos, "eos_token": eos, "cases": cases}
    with open(os.path.join(HERE, "chat_template.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
