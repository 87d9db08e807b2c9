#include "png_file.h"

#include <vector>

#include "output_file.h"

#if POCKETLM_HAVE_PNG
#include <png.h>

namespace pocketlm::cli {

namespace {

void append(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::vector<unsigned char>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + length);
}

void no_flush(png_structp) {}

// Encodes rows[height] of width RGB pixels into *out; false when libpng fails (it reports
// through longjmp, so nothing with a destructor lives in this frame).
bool encode(unsigned char** rows, int width, int height, std::vector<unsigned char>* out) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    return false;
  }
  png_set_write_fn(png, out, append, no_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

Status write_png(const Framebuffer& fb, const std::string& path, const char* flag) {
  std::vector<unsigned char> rgb(static_cast<std::size_t>(fb.width) * static_cast<std::size_t>(fb.height) * 3);
  std::vector<unsigned char*> rows(static_cast<std::size_t>(fb.height));
  for (int y = 0; y < fb.height; ++y) {
    unsigned char* row = rgb.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(fb.width) * 3;
    rows[static_cast<std::size_t>(y)] = row;
    const std::uint32_t* src = fb.pixels + static_cast<std::size_t>(y) * static_cast<std::size_t>(fb.stride);
    for (int x = 0; x < fb.width; ++x) {
      row[3 * x] = static_cast<unsigned char>(src[x] & 0xFF);
      row[3 * x + 1] = static_cast<unsigned char>((src[x] >> 8) & 0xFF);
      row[3 * x + 2] = static_cast<unsigned char>((src[x] >> 16) & 0xFF);
    }
  }
  std::vector<unsigned char> bytes;
  if (!encode(rows.data(), fb.width, fb.height, &bytes))
    return Status::error(StatusCode::kIoError, "%s: %s: libpng could not encode the %dx%d image", flag, path.c_str(),
                         fb.width, fb.height);
  OutputFile file;
  POCKETLM_TRY(file.open(path, flag));
  POCKETLM_TRY(file.write(bytes.data(), bytes.size()));
  return file.commit();
}

}  // namespace pocketlm::cli

#else

namespace pocketlm::cli {

Status write_png(const Framebuffer&, const std::string& path, const char* flag) {
  return Status::error(StatusCode::kUnsupported, "%s: %s: this build has no libpng (Debian: libpng-dev)", flag,
                       path.c_str());
}

}  // namespace pocketlm::cli

#endif
