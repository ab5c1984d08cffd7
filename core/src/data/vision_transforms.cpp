// Image transform pipelines from YAML: parsing and checks, the per-sample draws (torchvision's
// get_params on Philox words of (seed, epoch, sample)), and the steps on uint8 planes, the first
// resampling one reading only its window of the decoded image.
#include "ingot/data/vision_transforms.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "augment_ops.h"
#include "data_rng.h"
#include "ingot/base/error.h"
#include "ingot/config/schema.h"
#include "pixel_ops.h"
#include "resample.h"

namespace ingot::data {

TransformRng::TransformRng(uint64_t seed, int64_t epoch, int64_t index) : seed_(seed), epoch_(epoch), index_(index) {}

uint32_t TransformRng::word() {
  if (used_ == 4) {
    const sdk::PhiloxBlock b = data_random(seed_, DataStream::Transform, static_cast<uint64_t>(index_),
                                           static_cast<uint64_t>(epoch_), block_++);
    std::copy(b.v, b.v + 4, words_);
    used_ = 0;
  }
  return words_[used_++];
}

double TransformRng::uniform(double lo, double hi) {
  const double u = static_cast<double>(word()) * 0x1p-32;
  return std::min(lo + (hi - lo) * u, std::nextafter(hi, lo));
}

int64_t TransformRng::below(int64_t n) { return random_below(word(), n); }

namespace {

using Kind = TransformStep::Kind;

struct StepName {
  const char* name;
  Kind kind;
};
constexpr StepName kSteps[] = {{"random_resized_crop", Kind::RandomResizedCrop},
                               {"resize", Kind::Resize},
                               {"center_crop", Kind::CenterCrop},
                               {"hflip", Kind::HorizontalFlip},
                               {"color_jitter", Kind::ColorJitter},
                               {"trivial_augment", Kind::TrivialAugment},
                               {"rand_augment", Kind::RandAugment}};

config::Schema step_schema(Kind kind) {
  config::Schema s;
  switch (kind) {
    case Kind::RandomResizedCrop:
      s.any("size", true).any("scale").any("ratio");
      break;
    case Kind::Resize:
    case Kind::CenterCrop:
      s.any("size", true);
      break;
    case Kind::HorizontalFlip:
      s.number("p", 0.0, 1.0);
      break;
    case Kind::ColorJitter:
      s.number("brightness", 0.0).number("contrast", 0.0).number("saturation", 0.0).number("hue", 0.0, 0.5);
      break;
    case Kind::TrivialAugment:
      s.integer("magnitude_bins", 2, 1 << 16);
      break;
    case Kind::RandAugment:
      s.integer("num_ops", 0, 64).integer("magnitude", 0, 1 << 16).integer("magnitude_bins", 2, 1 << 16);
      break;
  }
  return s;
}

/// `size`: S or [H, W], each at least 1. One S gives height S, width 0 (resize: the shorter side).
void parse_size(const YAML::Node& node, const std::string& file, const std::string& key, TransformStep& step) {
  const auto bad = [&] {
    return ConfigError(
        fmt::format("{}: '{}' must be a size in pixels, S or [H, W], each at least 1", config::where(file, node), key));
  };
  try {
    if (node.IsScalar()) {
      step.height = node.as<int64_t>();
      step.width = step.kind == Kind::Resize ? 0 : step.height;
    } else if (node.IsSequence() && node.size() == 2) {
      step.height = node[0].as<int64_t>();
      step.width = node[1].as<int64_t>();
    } else {
      throw bad();
    }
  } catch (const YAML::Exception&) {
    throw bad();
  }
  if (step.height < 1 || step.width < 0 || (step.width == 0 && step.kind != Kind::Resize) || step.height > (1 << 16) ||
      step.width > (1 << 16))
    throw bad();
}

/// `scale` or `ratio`: [lo, hi] with 0 < lo <= hi.
std::array<double, 2> parse_range(const YAML::Node& node, const std::string& file, const std::string& key) {
  std::array<double, 2> r{};
  const auto bad = [&](const std::string& why) {
    return ConfigError(
        fmt::format("{}: '{}' must be [lo, hi] with 0 < lo <= hi{}", config::where(file, node), key, why));
  };
  try {
    if (!node.IsSequence() || node.size() != 2) throw bad("");
    r = {node[0].as<double>(), node[1].as<double>()};
  } catch (const YAML::Exception&) {
    throw bad("");
  }
  if (!std::isfinite(r[0]) || !std::isfinite(r[1]) || !(r[0] > 0.0) || r[0] > r[1])
    throw bad(fmt::format(", got [{}, {}]", r[0], r[1]));
  return r;
}

template <class T>
void read(const YAML::Node& params, const char* key, T& value) {
  if (params && params.IsMap() && params[key]) value = params[key].as<T>();
}

TransformStep parse_step(const YAML::Node& entry, const std::string& file, const std::string& path) {
  if (entry.IsMap() && entry.size() != 1)
    throw ConfigError(
        fmt::format("{}: each step of '{}' is one name (or {{name: {{key: value}}}}), got a map of {} keys",
                    config::where(file, entry), path, entry.size()));
  if (!entry.IsMap() && !entry.IsScalar())
    throw ConfigError(
        fmt::format("{}: each step of '{}' is a name or {{name: {{key: value}}}}", config::where(file, entry), path));
  // (copies, not assignments: assigning a YAML::Node writes through to the node it refers to)
  const YAML::Node name_node = entry.IsMap() ? entry.begin()->first : entry;
  const YAML::Node params = entry.IsMap() ? entry.begin()->second : YAML::Node();
  const std::string name = name_node.Scalar();
  const auto* it =
      std::find_if(std::begin(kSteps), std::end(kSteps), [&](const StepName& s) { return name == s.name; });
  if (it == std::end(kSteps)) {
    std::vector<std::string> names;
    for (const StepName& s : kSteps) names.emplace_back(s.name);
    const std::string hint = config::closest_match(name, names);
    throw ConfigError(fmt::format(
        "{}: unknown transform '{}' in '{}'; {}", config::where(file, name_node), name, path,
        hint.empty() ? fmt::format("known: {}", fmt::join(names, ", ")) : fmt::format("did you mean '{}'?", hint)));
  }
  TransformStep step;
  step.kind = it->kind;
  const std::string at = fmt::format("{}.{}", path, name);
  const bool sizing =
      step.kind == Kind::RandomResizedCrop || step.kind == Kind::Resize || step.kind == Kind::CenterCrop;
  if (sizing && params && (params.IsScalar() || params.IsSequence())) {  // {resize: 256}, {center_crop: [224, 200]}
    parse_size(params, file, at, step);
    return step;
  }
  if (params && !params.IsNull()) {
    step_schema(step.kind).validate(params, file, at);
  } else if (sizing) {
    throw ConfigError(fmt::format("{}: '{}' needs a size: {{{}: 224}} or {{{}: {{size: 224}}}}",
                                  config::where(file, name_node), at, name, name));
  }
  if (params && params.IsMap()) {
    if (params["size"]) parse_size(params["size"], file, at + ".size", step);
    if (params["scale"]) step.scale = parse_range(params["scale"], file, at + ".scale");
    if (params["ratio"]) step.ratio = parse_range(params["ratio"], file, at + ".ratio");
    read(params, "p", step.p);
    read(params, "brightness", step.brightness);
    read(params, "contrast", step.contrast);
    read(params, "saturation", step.saturation);
    read(params, "hue", step.hue);
    read(params, "num_ops", step.num_ops);
    read(params, "magnitude", step.magnitude);
    read(params, "magnitude_bins", step.magnitude_bins);
    if (step.kind == Kind::RandAugment && step.magnitude >= step.magnitude_bins)
      throw ConfigError(fmt::format("{}: '{}.magnitude' must be below magnitude_bins ({}), got {}",
                                    config::where(file, params["magnitude"] ? params["magnitude"] : params), at,
                                    step.magnitude_bins, step.magnitude));
  }
  return step;
}

/// The size after a step from an image of h x w, when known (0 x 0: not known).
std::array<int64_t, 2> size_after(const TransformStep& s, std::array<int64_t, 2> in) {
  switch (s.kind) {
    case Kind::RandomResizedCrop:
    case Kind::CenterCrop:
      return {s.height, s.width};
    case Kind::Resize: {
      if (s.width > 0) return {s.height, s.width};
      if (in[0] == 0) return in;
      // _compute_resized_output_size: the shorter side becomes S, the longer int(S * long / short).
      const int64_t shorter = std::min(in[0], in[1]), longer = std::max(in[0], in[1]);
      const auto other = static_cast<int64_t>(static_cast<double>(s.height * longer) / static_cast<double>(shorter));
      return in[1] <= in[0] ? std::array<int64_t, 2>{other, s.height} : std::array<int64_t, 2>{s.height, other};
    }
    default:
      return in;
  }
}

/// torchvision's RandomResizedCrop.get_params: {top, left, height, width}.
std::vector<double> random_resized_crop_params(const TransformStep& s, int64_t height, int64_t width,
                                               TransformRng& rng) {
  const double area = static_cast<double>(height * width);
  const double log_lo = std::log(s.ratio[0]), log_hi = std::log(s.ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * rng.uniform(s.scale[0], s.scale[1]);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const auto w = static_cast<int64_t>(std::nearbyint(std::sqrt(target * aspect)));
    const auto h = static_cast<int64_t>(std::nearbyint(std::sqrt(target / aspect)));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int64_t top = rng.below(height - h + 1), left = rng.below(width - w + 1);
      return {static_cast<double>(top), static_cast<double>(left), static_cast<double>(h), static_cast<double>(w)};
    }
  }
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (in_ratio < s.ratio[0]) {
    h = static_cast<int64_t>(std::nearbyint(static_cast<double>(w) / s.ratio[0]));
  } else if (in_ratio > s.ratio[1]) {
    w = static_cast<int64_t>(std::nearbyint(static_cast<double>(h) * s.ratio[1]));
  }
  return {static_cast<double>((height - h) / 2), static_cast<double>((width - w) / 2), static_cast<double>(h),
          static_cast<double>(w)};
}

/// CenterCrop's offset along one axis: negative when the crop is larger (zero padding before).
int64_t center_offset(int64_t in, int64_t crop) {
  return crop > in ? -((crop - in) / 2) : half_rounded_even(in - crop);
}

/// One op of TrivialAugmentWide (bin drawn) or RandAugment (bin fixed): {op, bin, sign, magnitude}.
void draw_augment_op(const TransformStep& s, int64_t height, int64_t width, TransformRng& rng,
                     std::vector<double>& draws) {
  const bool wide = s.kind == Kind::TrivialAugment;
  const auto op = static_cast<AugmentOp>(rng.below(kAugmentOps));
  int64_t bin = 0;
  if (augment_op_has_magnitudes(op)) bin = wide ? rng.below(s.magnitude_bins) : s.magnitude;
  const double sign = augment_op_signed(op) && rng.below(2) == 1 ? -1.0 : 1.0;
  const double magnitude = augment_magnitude(op, wide, bin, s.magnitude_bins, height, width);
  draws.insert(draws.end(), {static_cast<double>(op), static_cast<double>(bin), sign, sign * magnitude});
}

/// The planes of `image` in rows [y0, y1) and columns [x0, x1), converted as image_planes does.
Planes planes_of(const Image& image, int64_t channels, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  Planes p;
  p.channels = channels;
  p.height = y1 - y0;
  p.width = x1 - x0;
  p.px.resize(static_cast<size_t>(channels * p.area()));
  const int64_t in = image.channels;
  const bool colour = in >= 3;
  for (int64_t y = y0; y < y1; ++y) {
    const uint8_t* row = image.pixels.data() + (y * image.width + x0) * in;
    const int64_t at = (y - y0) * p.width;
    if (channels == 3) {
      for (int64_t c = 0; c < 3; ++c) {
        uint8_t* dst = p.plane(c) + at;
        const int64_t k = colour ? c : 0;
        for (int64_t x = 0; x < p.width; ++x) dst[x] = row[x * in + k];
      }
    } else {
      uint8_t* dst = p.plane(0) + at;
      for (int64_t x = 0; x < p.width; ++x) {
        const uint8_t* px = row + x * in;
        dst[x] = colour ? static_cast<uint8_t>((px[0] * 299 + px[1] * 587 + px[2] * 114) / 1000) : px[0];
      }
    }
  }
  return p;
}

/// A resampling step's source window (in the planes' pixels) and which of its outputs to make.
struct Resampling {
  double top, left, height, width;
  int64_t out_height, out_width;
  int64_t first_y = 0, first_x = 0, count_y, count_x;
};

/// The window's outputs, bilinear antialiased, rounded to uint8 as torchvision's resize does.
Planes resampled(const Planes& src, const Resampling& r, std::vector<float>& scratch, std::vector<float>& rows) {
  const ResampleAxis ys = resample_axis(src.height, r.top, r.height, r.out_height, r.first_y, r.count_y, true);
  const ResampleAxis xs = resample_axis(src.width, r.left, r.width, r.out_width, r.first_x, r.count_x, true);
  scratch.resize(static_cast<size_t>(src.channels * r.count_y * r.count_x));
  resample(src.px.data(), src.channels, src.height, src.width, ys, xs, scratch.data(), rows);
  Planes out;
  out.channels = src.channels;
  out.height = r.count_y;
  out.width = r.count_x;
  out.px.resize(scratch.size());
  std::transform(scratch.begin(), scratch.end(), out.px.begin(),
                 [](float v) { return static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f)); });
  return out;
}

/// The h x w crop at (top, left), zeros outside the image.
Planes cropped(const Planes& src, int64_t top, int64_t left, int64_t h, int64_t w) {
  Planes out;
  out.channels = src.channels;
  out.height = h;
  out.width = w;
  out.px.assign(static_cast<size_t>(src.channels * h * w), 0);
  const int64_t x0 = std::max<int64_t>(0, -left), x1 = std::min(w, src.width - left);
  for (int64_t c = 0; c < src.channels; ++c)
    for (int64_t y = std::max<int64_t>(0, -top); y < std::min(h, src.height - top); ++y)
      if (x1 > x0) std::copy_n(src.plane(c) + (top + y) * src.width + left + x0, x1 - x0, out.plane(c) + y * w + x0);
  return out;
}

void color_jitter(Planes& img, const TransformStep& s, const std::vector<double>& d) {
  for (int k = 0; k < 4; ++k) {
    switch (static_cast<int>(d[k])) {
      case 0:
        if (s.brightness > 0.0) adjust_brightness(img, d[4]);
        break;
      case 1:
        if (s.contrast > 0.0) adjust_contrast(img, d[5]);
        break;
      case 2:
        if (s.saturation > 0.0) adjust_saturation(img, d[6]);
        break;
      default:
        if (s.hue > 0.0) adjust_hue(img, d[7]);
        break;
    }
  }
}

}  // namespace

TransformPipeline TransformPipeline::parse(const YAML::Node& list, const std::string& file, const std::string& where) {
  if (!list.IsSequence() || list.size() == 0)
    throw ConfigError(
        fmt::format("{}: '{}' must be a list of transforms ending in a fixed size, e.g. "
                    "[{{random_resized_crop: {{size: 224}}}}, hflip]",
                    config::where(file, list), where));
  std::vector<TransformStep> steps;
  std::array<int64_t, 2> size{0, 0};
  for (size_t i = 0; i < list.size(); ++i) {
    steps.push_back(parse_step(list[i], file, fmt::format("{}[{}]", where, i)));
    size = size_after(steps.back(), size);
  }
  if (size[0] == 0)
    throw ConfigError(
        fmt::format("{}: '{}' does not give every image one size: end its sizing with "
                    "random_resized_crop, resize to [H, W] or center_crop",
                    config::where(file, list), where));
  return TransformPipeline(std::move(steps));
}

Shape TransformPipeline::output_shape(int64_t channels) const {
  std::array<int64_t, 2> size{0, 0};
  for (const TransformStep& s : steps_) size = size_after(s, size);
  INGOT_CHECK(size[0] > 0, "TransformPipeline: the steps do not fix the output size");
  return Shape{channels, size[0], size[1]};
}

TransformPlan TransformPipeline::plan(int64_t height, int64_t width, TransformRng& rng) const {
  TransformPlan plan;
  std::array<int64_t, 2> size{height, width};
  for (const TransformStep& s : steps_) {
    std::vector<double>& d = plan.draws.emplace_back();
    const std::array<int64_t, 2> next = size_after(s, size);
    switch (s.kind) {
      case Kind::RandomResizedCrop:
        d = random_resized_crop_params(s, size[0], size[1], rng);
        break;
      case Kind::Resize:
        d = {static_cast<double>(size[0]), static_cast<double>(size[1]), static_cast<double>(next[0]),
             static_cast<double>(next[1])};
        break;
      case Kind::CenterCrop:
        d = {static_cast<double>(size[0]), static_cast<double>(size[1]),
             static_cast<double>(center_offset(size[0], s.height)),
             static_cast<double>(center_offset(size[1], s.width))};
        break;
      case Kind::HorizontalFlip:
        d = {rng.uniform() < s.p ? 1.0 : 0.0};
        break;
      case Kind::ColorJitter: {
        int64_t order[4] = {0, 1, 2, 3};
        for (int64_t k = 3; k > 0; --k) std::swap(order[k], order[rng.below(k + 1)]);
        const auto factor = [&rng](double v) { return v > 0.0 ? rng.uniform(std::max(0.0, 1.0 - v), 1.0 + v) : 1.0; };
        const double b = factor(s.brightness), c = factor(s.contrast), sat = factor(s.saturation);
        const double hue = s.hue > 0.0 ? rng.uniform(-s.hue, s.hue) : 0.0;
        d = {static_cast<double>(order[0]),
             static_cast<double>(order[1]),
             static_cast<double>(order[2]),
             static_cast<double>(order[3]),
             b,
             c,
             sat,
             hue};
        break;
      }
      case Kind::TrivialAugment:
        draw_augment_op(s, size[0], size[1], rng, d);
        break;
      case Kind::RandAugment:
        for (int64_t k = 0; k < s.num_ops; ++k) draw_augment_op(s, size[0], size[1], rng, d);
        break;
    }
    size = next;
  }
  // The first resampling step's window against its output: how far the decoder may shrink it.
  if (!steps_.empty() && (steps_[0].kind == Kind::RandomResizedCrop || steps_[0].kind == Kind::Resize)) {
    const std::vector<double>& d = plan.draws[0];
    const bool crop = steps_[0].kind == Kind::RandomResizedCrop;
    const double win_h = crop ? d[2] : d[0], win_w = crop ? d[3] : d[1];
    const double out_h = crop ? static_cast<double>(steps_[0].height) : d[2];
    const double out_w = crop ? static_cast<double>(steps_[0].width) : d[3];
    for (int64_t divisor = 8; divisor > 1; divisor /= 2)
      if (win_h >= out_h * static_cast<double>(divisor) && win_w >= out_w * static_cast<double>(divisor)) {
        plan.max_decode_divisor = divisor;
        break;
      }
  }
  return plan;
}

void TransformPipeline::apply(const TransformPlan& plan, const Image& image, int64_t divisor, int64_t channels,
                              float* out) const {
  INGOT_CHECK(plan.draws.size() == steps_.size(), "TransformPipeline::apply: a plan of {} steps for {} steps",
              plan.draws.size(), steps_.size());
  INGOT_CHECK(divisor >= 1 && divisor <= plan.max_decode_divisor,
              "TransformPipeline::apply: decoded at 1/{}, but the plan allows at most 1/{}", divisor,
              plan.max_decode_divisor);
  INGOT_CHECK_AS(channels == 1 || channels == 3, ConfigError,
                 "images give 1 (grey) or 3 (RGB) channels, but model.input_shape asks for {}; set its first value "
                 "to 1 or 3",
                 channels);
  std::vector<float> scratch, rows;
  Planes img;
  size_t i = 0;
  if (!steps_.empty() && (steps_[0].kind == Kind::RandomResizedCrop || steps_[0].kind == Kind::Resize)) {
    // The first step resamples straight from the decoded image: only its window is converted, and
    // a resize followed by a center crop that fits makes only the cropped outputs.
    const std::vector<double>& d = plan.draws[0];
    const double scale = 1.0 / static_cast<double>(divisor);
    Resampling r{};
    if (steps_[0].kind == Kind::RandomResizedCrop) {
      r = {d[0] * scale, d[1] * scale, d[2] * scale, d[3] * scale, steps_[0].height, steps_[0].width};
    } else {
      r = {0.0, 0.0, d[0] * scale, d[1] * scale, static_cast<int64_t>(d[2]), static_cast<int64_t>(d[3])};
    }
    r.count_y = r.out_height;
    r.count_x = r.out_width;
    if (steps_[0].kind == Kind::Resize && steps_.size() > 1 && steps_[1].kind == Kind::CenterCrop) {
      const std::vector<double>& c = plan.draws[1];
      if (c[2] >= 0 && c[3] >= 0) {
        r.first_y = static_cast<int64_t>(c[2]);
        r.first_x = static_cast<int64_t>(c[3]);
        r.count_y = steps_[1].height;
        r.count_x = steps_[1].width;
        ++i;
      }
    }
    const int64_t y0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(r.top)), 0, image.height);
    const int64_t y1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(r.top + r.height)), y0, image.height);
    const int64_t x0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(r.left)), 0, image.width);
    const int64_t x1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(r.left + r.width)), x0, image.width);
    const Planes window = planes_of(image, channels, y0, y1, x0, x1);
    r.top -= static_cast<double>(y0);
    r.left -= static_cast<double>(x0);
    img = resampled(window, r, scratch, rows);
    ++i;
  } else {
    img = planes_of(image, channels, 0, image.height, 0, image.width);
  }
  for (; i < steps_.size(); ++i) {
    const TransformStep& s = steps_[i];
    const std::vector<double>& d = plan.draws[i];
    switch (s.kind) {
      case Kind::RandomResizedCrop:
        img = resampled(img, {d[0], d[1], d[2], d[3], s.height, s.width, 0, 0, s.height, s.width}, scratch, rows);
        break;
      case Kind::Resize: {
        const auto h = static_cast<int64_t>(d[2]), w = static_cast<int64_t>(d[3]);
        if (h != img.height || w != img.width)
          img = resampled(img,
                          {0.0, 0.0, static_cast<double>(img.height), static_cast<double>(img.width), h, w, 0, 0, h, w},
                          scratch, rows);
        break;
      }
      case Kind::CenterCrop:
        img = cropped(img, static_cast<int64_t>(d[2]), static_cast<int64_t>(d[3]), s.height, s.width);
        break;
      case Kind::HorizontalFlip:
        if (d[0] != 0.0) hflip(img);
        break;
      case Kind::ColorJitter:
        color_jitter(img, s, d);
        break;
      case Kind::TrivialAugment:
      case Kind::RandAugment:
        for (size_t k = 0; k + 3 < d.size(); k += 4) apply_augment_op(img, static_cast<AugmentOp>(d[k]), d[k + 3]);
        break;
    }
  }
  std::transform(img.px.begin(), img.px.end(), out, [](uint8_t v) { return static_cast<float>(v); });
}

}  // namespace ingot::data
