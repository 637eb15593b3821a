//! Chat templates: the Jinja program a model ships (GGUF `tokenizer.chat_template`, or
//! `chat_template` in tokenizer_config.json) turns a list of messages into the prompt text
//! the model was trained on. Rendered with minijinja with the variables Hugging Face's
//! `apply_chat_template` passes (`messages`, `add_generation_prompt`, `bos_token`,
//! `eos_token`) and its `raise_exception` helper.

extern crate std;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use mlx_arm_core::{Error, Result};

const OP: &str = "chat_template";

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A message from `role`.
    pub fn new(role: &str, content: &str) -> Message {
        Message { role: role.to_string(), content: content.to_string() }
    }
}

/// Renders `template` over `messages`. `add_generation_prompt` appends the opening of the
/// assistant's turn, which is what generation continues from.
pub fn render(template: &str, messages: &[Message], add_generation_prompt: bool, bos: &str, eos: &str) -> Result<String> {
    let mut env = minijinja::Environment::new();
    // Hugging Face renders with these two set; whitespace around block tags depends on them.
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_function("raise_exception", |msg: String| -> core::result::Result<String, minijinja::Error> {
        Err(minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, msg))
    });
    // Templates written for Python's Jinja call str methods (`.strip()`, `.startswith()`).
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_template("chat", template).map_err(|e| Error::format(OP, format!("the chat template does not parse: {e}")))?;
    let tmpl = env.get_template("chat").map_err(|e| Error::runtime(OP, format!("{e}")))?;
    let msgs: Vec<minijinja::Value> = messages
        .iter()
        .map(|m| minijinja::context! { role => m.role.clone(), content => m.content.clone() })
        .collect();
    tmpl.render(minijinja::context! {
        messages => msgs,
        add_generation_prompt => add_generation_prompt,
        bos_token => bos,
        eos_token => eos,
    })
    .map_err(|e| Error::invalid(OP, format!("the chat template failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    // SmolLM2-Instruct's template as its GGUF file carries it.
    const SMOLLM: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn smollm_template_renders_as_transformers_does() {
        // Expected text: Python's Jinja2 with Hugging Face's settings (trim_blocks,
        // lstrip_blocks), as apply_chat_template renders it.
        let out = render(SMOLLM, &[Message::new("user", "Hi there")], true, "<|im_start|>", "<|im_end|>").unwrap();
        assert_eq!(
            out,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"
        );
        let out = render(SMOLLM, &[Message::new("system", "Be brief."), Message::new("user", "Hi")], false, "", "").unwrap();
        assert_eq!(out, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
    }

    #[test]
    fn broken_templates_and_raise_exception_are_errors() {
        assert!(render("{% for %}", &[], true, "", "").is_err());
        let t = "{% if messages|length == 0 %}{{ raise_exception('no messages') }}{% endif %}";
        let e = render(t, &[], true, "", "").unwrap_err();
        assert!(format!("{e}").contains("no messages"), "{e}");
        let t = "{{ messages[0]['content'].strip() }}";
        assert_eq!(render(t, &[Message::new("user", "  x ")], false, "", "").unwrap(), "x");
    }
}
