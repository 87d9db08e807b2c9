/* The images linked into read-only memory as a firmware image would sit in flash: the tokenizer,
   and the model when it fits the board's code memory (POCKETLM_MODEL_PATH; a larger one is read
   from the host, semihosting_storage.h). The paths come from CMake. */
#define IMAGE(name, path)    \
  .section .rodata.name, "a"; \
  .balign 16;                 \
  .global name;               \
name:                         \
  .incbin path;               \
  .global name##_end;         \
name##_end:

#ifdef POCKETLM_MODEL_PATH
IMAGE(pocketlm_model_image, POCKETLM_MODEL_PATH)
#endif
IMAGE(pocketlm_tokenizer_image, POCKETLM_TOKENIZER_PATH)
