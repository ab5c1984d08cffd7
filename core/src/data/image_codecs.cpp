// PNG and JPEG decoding through libpng and libjpeg. Both report errors by longjmp: the jump lands
// in the decoding function itself, whose frame holds only C objects (no destructors), and every
// buffer that must be freed afterwards lives in *out, not in a local changed after setjmp.
#include "image_codecs.h"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE declared first
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <png.h>

#include <csetjmp>
#include <cstdlib>
#include <cstring>

#include "image_orientation.h"

namespace ingot::data::codec {
namespace {

constexpr size_t kMaxPixels = size_t{1} << 28;  // 268 M samples: a corrupt header, not a photo

/// The bytes libpng reads from, and where they end.
struct PngSource {
  const unsigned char* data;
  size_t size;
  size_t offset;
};

void png_read_memory(png_structp png, png_bytep dst, size_t n) {
  auto* s = static_cast<PngSource*>(png_get_io_ptr(png));
  if (s->size - s->offset < n) png_error(png, "truncated: the file ends before the image does");
  std::memcpy(dst, s->data + s->offset, n);
  s->offset += n;
}

void png_on_error(png_structp png, png_const_charp message) {
  auto* out = static_cast<RawImage*>(png_get_error_ptr(png));
  std::snprintf(out->message, sizeof out->message, "%s", message);
  png_longjmp(png, 1);
}

void png_on_warning(png_structp, png_const_charp) {}

void release(RawImage* out) {
  std::free(out->pixels);
  out->pixels = nullptr;
}

/// libjpeg's error manager with the jump target and the image that receives the message.
struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  RawImage* out;
};

[[noreturn]] void jpeg_on_error(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErrors*>(cinfo->err);
  char text[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, text);
  std::snprintf(e->out->message, sizeof e->out->message, "%s", text);
  std::longjmp(e->jump, 1);
}

/// Level -1 is a warning about corrupt data (a truncated file among them): an error here, except
/// stray bytes between segments, which the image does not need (PIL ignores them too).
void jpeg_on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code != JWRN_EXTRANEOUS_DATA) jpeg_on_error(cinfo);
}

void jpeg_quiet(j_common_ptr) {}

// libjpeg's errors and warnings to `errors` (which longjmps to the caller's setjmp) and `out`'s
// message; nothing printed.
void route_errors(jpeg_decompress_struct& cinfo, JpegErrors& errors, RawImage* out) {
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = jpeg_on_error;
  errors.mgr.emit_message = jpeg_on_message;
  errors.mgr.output_message = jpeg_quiet;
  errors.out = out;
}

constexpr int kExifMarker = JPEG_APP0 + 1;

/// Before jpeg_read_header: keep the APP1 segments (EXIF, XMP) whole for read_orientation.
void save_exif(jpeg_decompress_struct& cinfo, bool read) {
  if (read) jpeg_save_markers(&cinfo, kExifMarker, 0xFFFF);
}

/// After jpeg_read_header: the first EXIF APP1 segment's orientation (PIL reads the first too).
void read_orientation_of(const jpeg_decompress_struct& cinfo, RawImage* out) {
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m != nullptr; m = m->next)
    if (m->marker == kExifMarker && m->data_length >= 6 && std::memcmp(m->data, "Exif\0\0", 6) == 0) {
      out->orientation = exif_orientation(m->data, m->data_length);
      return;
    }
}

}  // namespace

bool decode_png(const unsigned char* data, size_t size, RawImage* out) {
  PngSource source{data, size, 0};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, out, png_on_error, png_on_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    std::snprintf(out->message, sizeof out->message, "out of memory");
    png_destroy_read_struct(png ? &png : nullptr, nullptr, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    release(out);
    return false;
  }
  png_set_read_fn(png, &source, png_read_memory);
  png_read_info(png, info);
  png_set_palette_to_rgb(png);
  png_set_expand_gray_1_2_4_to_8(png);
  png_set_tRNS_to_alpha(png);
  png_set_strip_16(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int channels = png_get_channels(png, info);
  if (width * height * static_cast<size_t>(channels) > kMaxPixels) png_error(png, "the image is too large");
  if (png_get_rowbytes(png, info) != width * static_cast<size_t>(channels))
    png_error(png, "unexpected row layout after conversion to 8 bits");
  out->pixels = static_cast<unsigned char*>(std::calloc(width * height * static_cast<size_t>(channels), 1));
  if (!out->pixels) png_error(png, "out of memory");
  out->width = static_cast<int>(width);
  out->height = static_cast<int>(height);
  out->channels = channels;
  for (int pass = 0; pass < passes; ++pass)
    for (size_t y = 0; y < height; ++y)
      png_read_row(png, out->pixels + y * width * static_cast<size_t>(channels), nullptr);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

bool decode_jpeg(const unsigned char* data, size_t size, RawImage* out, int divisor, bool read_orientation) {
  jpeg_decompress_struct cinfo;
  JpegErrors errors;
  route_errors(cinfo, errors, out);
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    release(out);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  save_exif(cinfo, read_orientation);
  jpeg_read_header(&cinfo, TRUE);
  if (read_orientation) read_orientation_of(cinfo, out);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    std::snprintf(out->message, sizeof out->message, "CMYK JPEG images are not supported; save it as RGB");
    out->unsupported = true;
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  if (divisor > 1) {  // libjpeg's DCT scaling: 1/2, 1/4, 1/8 of each side, rounded up
    cinfo.scale_num = 1;
    cinfo.scale_denom = static_cast<unsigned>(divisor);
  }
  jpeg_start_decompress(&cinfo);
  const size_t stride = static_cast<size_t>(cinfo.output_width) * static_cast<size_t>(cinfo.output_components);
  if (stride * cinfo.output_height > kMaxPixels) {
    std::snprintf(out->message, sizeof out->message, "the image is too large");
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  // every row is written below: no zeroing first (this buffer is allocated per decoded image)
  out->pixels = static_cast<unsigned char*>(std::malloc(stride * cinfo.output_height));
  if (!out->pixels) {
    std::snprintf(out->message, sizeof out->message, "out of memory");
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  out->width = static_cast<int>(cinfo.output_width);
  out->height = static_cast<int>(cinfo.output_height);
  out->channels = cinfo.output_components;
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out->pixels + cinfo.output_scanline * stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

bool probe_jpeg(const unsigned char* data, size_t size, RawImage* out, bool read_orientation) {
  jpeg_decompress_struct cinfo;
  JpegErrors errors;
  route_errors(cinfo, errors, out);
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  save_exif(cinfo, read_orientation);
  jpeg_read_header(&cinfo, TRUE);
  if (read_orientation) read_orientation_of(cinfo, out);
  out->width = static_cast<int>(cinfo.image_width);
  out->height = static_cast<int>(cinfo.image_height);
  out->channels = cinfo.num_components == 1 ? 1 : 3;
  jpeg_destroy_decompress(&cinfo);
  return true;
}

}  // namespace ingot::data::codec
