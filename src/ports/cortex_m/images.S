/* The model and tokenizer images, linked into read-only memory as a firmware image would sit in
   flash. The paths come from CMake (POCKETLM_FIRMWARE_MODEL / _TOKENIZER). */
#define IMAGE(name, path)    \
  .section .rodata.name, "a"; \
  .balign 16;                 \
  .global name;               \
name:                         \
  .incbin path;               \
  .global name##_end;         \
name##_end:

IMAGE(pocketlm_model_image, POCKETLM_MODEL_PATH)
IMAGE(pocketlm_tokenizer_image, POCKETLM_TOKENIZER_PATH)
