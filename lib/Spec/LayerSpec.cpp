//===- LayerSpec.cpp - JSON layer specifications --------------------------===//
//
// Parses and checks a layer spec (docs/SpecFormat.md). LLVM is built without
// exceptions, so nlohmann/json is used only through its non-throwing API:
// `parse(…, nullptr, false)` for the document, `sax_parse` with a handler for
// the position of a syntax error, and a type check before every `get<>`.
//
//===----------------------------------------------------------------------===//

#include "sluice/Spec/LayerSpec.h"
#include "sluice/Spec/SpecLimits.h"
#include "sluice/Support/InputLimits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

using namespace mlir::sluice;
using json = nlohmann::json;
using llvm::ArrayRef;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

StringRef mlir::sluice::stringifyNorm(NormPlacement norm) {
  switch (norm) {
  case NormPlacement::Post:
    return "post";
  case NormPlacement::Pre:
    return "pre";
  }
  llvm_unreachable("unknown norm placement");
}

StringRef mlir::sluice::stringifyNormType(NormType normType) {
  return normType == NormType::RMSNorm ? "rmsnorm" : "layernorm";
}

StringRef mlir::sluice::stringifyActivation(Activation activation) {
  switch (activation) {
  case Activation::Relu:
    return "relu";
  case Activation::Gelu:
    return "gelu";
  case Activation::GeluTanh:
    return "gelu_tanh";
  case Activation::Silu:
    return "silu";
  case Activation::SwiGLU:
    return "swiglu";
  }
  llvm_unreachable("unknown activation");
}

StringRef mlir::sluice::stringifyDType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  llvm_unreachable("unknown dtype");
}

unsigned mlir::sluice::getByteWidth(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  }
  llvm_unreachable("unknown dtype");
}

//===----------------------------------------------------------------------===//
// Syntax: positions of errors and duplicate keys
//===----------------------------------------------------------------------===//

namespace {

/// A SAX handler that accepts everything, remembers the first syntax error
/// (with its byte position) and the first key that appears twice in one
/// object (which the DOM parser would silently drop). Memory is linear in
/// the input: each open container keeps the key it was opened under, and a
/// dotted path is built only for the duplicate key reported.
struct SyntaxChecker {
  std::optional<size_t> errorPosition;
  std::string errorMessage;
  std::optional<std::string> duplicateKey;

  /// One open object or array.
  struct Container {
    bool isObject;
    /// The key it was opened under in its parent object ("" at the top
    /// level or in an array).
    std::string key;
    /// Its keys so far (objects only).
    std::set<std::string> keys;
  };
  std::vector<Container> open;
  std::string lastKey;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t &) {
    return true;
  }
  bool string(json::string_t &) { return true; }
  bool binary(json::binary_t &) { return true; }
  bool start_object(size_t) {
    open.push_back({true, childKey(), {}});
    return true;
  }
  bool key(json::string_t &name) {
    lastKey = name;
    if (!open.back().keys.insert(name).second && !duplicateKey)
      duplicateKey = pathTo(name);
    return true;
  }
  bool end_object() {
    open.pop_back();
    return true;
  }
  bool start_array(size_t) {
    open.push_back({false, childKey(), {}});
    return true;
  }
  bool end_array() {
    open.pop_back();
    return true;
  }
  bool parse_error(size_t position, const std::string &,
                   const nlohmann::detail::exception &error) {
    // `position` counts the characters read, so the last one read (the end
    // of the offending token) is at offset `position - 1`.
    errorPosition = position > 0 ? position - 1 : 0;
    errorMessage = error.what();
    return false;
  }

private:
  /// The key of a value that starts now in the innermost container.
  std::string childKey() const {
    return !open.empty() && open.back().isObject ? lastKey : "";
  }
  /// The dotted path of `name` in the innermost object, arrays as "[]".
  std::string pathTo(StringRef name) const {
    std::string path;
    for (const Container &container : open) {
      if (!container.key.empty())
        path += (path.empty() ? "" : ".") + container.key;
      if (!container.isObject)
        path += "[]";
    }
    return path.empty() ? name.str() : path + "." + name.str();
  }
};

/// nlohmann's messages read "[json.exception.parse_error.101] parse error at
/// line 1, column 5: syntax error while parsing …"; keep what follows the
/// position (we print our own).
std::string stripNlohmannPrefix(StringRef message) {
  size_t column = message.find("column ");
  if (column != StringRef::npos) {
    size_t colon = message.find(": ", column);
    if (colon != StringRef::npos)
      return message.substr(colon + 2).str();
  }
  size_t bracket = message.find("] ");
  if (bracket != StringRef::npos)
    return message.substr(bracket + 2).str();
  return message.str();
}

/// Whether `text` starts like an MLIR file (a module, a sluice op, a
/// comment), for the hint that the extension chose the JSON parser.
bool looksLikeMlir(StringRef text) {
  text = text.ltrim();
  return text.starts_with("module") || text.starts_with("sluice.") ||
         text.starts_with("//") || text.starts_with("#");
}

//===----------------------------------------------------------------------===//
// Semantics: fields, types, ranges
//===----------------------------------------------------------------------===//

/// A short rendering of a JSON value for messages.
std::string describe(const json &value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>()))
    return "a number out of range";
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

const char *kindOf(const json &value) {
  switch (value.type()) {
  case json::value_t::object:
    return "an object";
  case json::value_t::array:
    return "an array";
  case json::value_t::string:
    return "a string";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::null:
    return "null";
  default:
    return "a number";
  }
}

/// Checks one spec; every method returns the first error found.
class SpecParser {
public:
  explicit SpecParser(StringRef path) : path(path) {}

  Error error(const Twine &message) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + message);
  }
  Error fieldError(StringRef field, const Twine &message) const {
    return error("field '" + field + "': " + message);
  }

  /// Rejects every key of `object` that is not in `allowed`.
  Error checkKnownFields(const json &object, StringRef prefix,
                         ArrayRef<StringRef> allowed) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      const std::string &key = it.key();
      if (llvm::is_contained(allowed, StringRef(key)))
        continue;
      return fieldError(join(prefix, key),
                        "unknown field; allowed: " + llvm::join(allowed, ", "));
    }
    return Error::success();
  }

  static std::string join(StringRef prefix, StringRef key) {
    return prefix.empty() ? key.str() : (prefix + "." + key).str();
  }

  /// The member `key` of `object`, or null if absent.
  static const json *find(const json &object, StringRef key) {
    auto it = object.find(key.str());
    return it == object.end() ? nullptr : &*it;
  }

  Expected<int64_t> getPositiveInteger(const json &value,
                                       StringRef field) const {
    if (value.is_number_unsigned()) {
      uint64_t number = value.get<uint64_t>();
      if (number > uint64_t(std::numeric_limits<int64_t>::max()))
        return fieldError(field, "expected a positive integer no larger "
                                 "than 2^63-1, got " +
                                     describe(value));
      if (number == 0)
        return fieldError(field, "expected a positive integer, got " +
                                     describe(value));
      return int64_t(number);
    }
    if (value.is_number_integer()) {
      int64_t number = value.get<int64_t>();
      if (number <= 0)
        return fieldError(field, "expected a positive integer, got " +
                                     describe(value));
      return number;
    }
    if (value.is_number_float()) {
      double number = value.get<double>();
      if (std::isfinite(number) && number >= 9.2233720368547758e18)
        return fieldError(field, "expected a positive integer no larger "
                                 "than 2^63-1, got " +
                                     describe(value));
    }
    return fieldError(field,
                      "expected a positive integer, got " + describe(value));
  }

  Expected<bool> getBool(const json &value, StringRef field) const {
    if (!value.is_boolean())
      return fieldError(field,
                        "expected true or false, got " + describe(value));
    return value.get<bool>();
  }

  Expected<double> getProbability(const json &value, StringRef field) const {
    if (value.is_number()) {
      double number = value.get<double>();
      if (std::isfinite(number) && number >= 0.0 && number < 1.0)
        return number;
    }
    return fieldError(field, "expected a probability in [0, 1), got " +
                                 describe(value));
  }

  Expected<double> getPositiveNumber(const json &value, StringRef field) const {
    if (value.is_number()) {
      double number = value.get<double>();
      if (std::isfinite(number) && number > 0.0)
        return number;
    }
    return fieldError(field,
                      "expected a positive number, got " + describe(value));
  }

  /// The index of the string `value` in `allowed`.
  Expected<size_t> getChoice(const json &value, StringRef field,
                             ArrayRef<StringRef> allowed) const {
    std::string list = llvm::join(allowed, ", ");
    if (!value.is_string())
      return fieldError(field, Twine("expected a string, one of: ") + list +
                                   "; got " + describe(value));
    const std::string &text = value.get_ref<const std::string &>();
    for (auto [index, choice] : llvm::enumerate(allowed))
      if (choice == text)
        return index;
    return fieldError(field, "unknown value " + describe(value) +
                                 "; allowed: " + list);
  }

  Expected<LayerSpec> parse(const json &root);

private:
  Error parseDims(const json &dims, LayerDims &out) const;
  Error parseDropout(const json &dropout, DropoutProbabilities &out) const;
  Error parseRope(const json &rope, const LayerDims &dims,
                  double &theta) const;
  Error checkTensorSizes(const LayerSpec &spec) const;
  std::string defaultName() const;

  StringRef path;
};

} // namespace

/// The file's stem, with characters a name may not hold replaced by '_'.
std::string SpecParser::defaultName() const {
  std::string name = llvm::sys::path::stem(path).str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_' && c != '.' && c != '-')
      c = '_';
  if (name.size() > kMaxNameLength)
    name.resize(kMaxNameLength);
  return name.empty() ? "layer" : name;
}

static bool isValidName(StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '-';
  });
}

Error SpecParser::parseDims(const json &dims, LayerDims &out) const {
  static const StringRef allowed[] = {"batch", "seq", "heads",   "head_dim",
                                      "embed", "ffn", "kv_heads"};
  if (Error err = checkKnownFields(dims, "dims", allowed))
    return err;
  struct Required {
    StringRef key;
    int64_t *slot;
  } required[] = {{"batch", &out.batch},
                  {"seq", &out.seq},
                  {"heads", &out.heads},
                  {"embed", &out.embed}};
  for (Required &field : required) {
    std::string name = join("dims", field.key);
    const json *value = find(dims, field.key);
    if (!value)
      return fieldError(name, "required field is missing");
    Expected<int64_t> number = getPositiveInteger(*value, name);
    if (!number)
      return number.takeError();
    *field.slot = *number;
  }
  if (const json *value = find(dims, "head_dim")) {
    Expected<int64_t> number = getPositiveInteger(*value, "dims.head_dim");
    if (!number)
      return number.takeError();
    out.headDim = *number;
    int64_t product;
    if (__builtin_mul_overflow(out.heads, out.headDim, &product) ||
        product != out.embed)
      return fieldError(
          "dims.embed",
          "must equal dims.heads x dims.head_dim = " + Twine(out.heads) +
              " x " + Twine(out.headDim) + ", got " + Twine(out.embed));
  } else {
    if (out.embed % out.heads != 0)
      return fieldError(
          "dims.embed",
          Twine(out.embed) +
              " is not divisible by dims.heads = " + Twine(out.heads) +
              "; the default dims.head_dim is embed / heads");
    out.headDim = out.embed / out.heads;
  }
  if (const json *value = find(dims, "ffn")) {
    Expected<int64_t> number = getPositiveInteger(*value, "dims.ffn");
    if (!number)
      return number.takeError();
    out.ffn = *number;
  } else if (__builtin_mul_overflow(out.embed, int64_t(4), &out.ffn)) {
    return fieldError("dims.ffn", "the default 4 x dims.embed = 4 x " +
                                      Twine(out.embed) +
                                      " does not fit in 64 bits");
  }
  out.kvHeads = out.heads;
  if (const json *value = find(dims, "kv_heads")) {
    Expected<int64_t> number = getPositiveInteger(*value, "dims.kv_heads");
    if (!number)
      return number.takeError();
    if (out.heads % *number != 0)
      return fieldError("dims.kv_heads",
                        "must divide dims.heads = " + Twine(out.heads) +
                            ", got " + Twine(*number));
    out.kvHeads = *number;
  }
  return Error::success();
}

Error SpecParser::parseRope(const json &rope, const LayerDims &dims,
                            double &theta) const {
  static const StringRef allowed[] = {"theta"};
  if (Error err = checkKnownFields(rope, "rope", allowed))
    return err;
  theta = 10000.0;
  if (const json *value = find(rope, "theta")) {
    Expected<double> number = getPositiveNumber(*value, "rope.theta");
    if (!number)
      return number.takeError();
    theta = *number;
  }
  if (dims.headDim % 2 != 0)
    return fieldError("rope", "rotary embeddings pair feature d with d + "
                              "head_dim / 2, so dims.head_dim must be even, "
                              "got " +
                                  Twine(dims.headDim));
  return Error::success();
}

Error SpecParser::parseDropout(const json &dropout,
                               DropoutProbabilities &out) const {
  static const StringRef allowed[] = {"attention", "residual", "activation"};
  if (Error err = checkKnownFields(dropout, "dropout", allowed))
    return err;
  struct Optional {
    StringRef key;
    double *slot;
  } fields[] = {{"attention", &out.attention},
                {"residual", &out.residual},
                {"activation", &out.activation}};
  for (Optional &field : fields) {
    const json *value = find(dropout, field.key);
    if (!value)
      continue;
    Expected<double> probability =
        getProbability(*value, join("dropout", field.key));
    if (!probability)
      return probability.takeError();
    *field.slot = *probability;
  }
  return Error::success();
}

/// Every tensor the layer creates must have a byte count that fits in 64
/// bits; one entry per distinct shape (x stands for every [b, j, i] tensor,
/// wq for every [embed x embed] weight, …).
Error SpecParser::checkTensorSizes(const LayerSpec &spec) const {
  const LayerDims &d = spec.dims;
  uint64_t width = getByteWidth(spec.dtype), statsWidth = 4;
  struct Tensor {
    const char *name;
    const char *shape;
    std::vector<int64_t> sizes;
    uint64_t width;
  } tensors[] = {
      {"x", "batch x seq x embed", {d.batch, d.seq, d.embed}, width},
      {"q",
       "batch x seq x heads x head_dim",
       {d.batch, d.seq, d.heads, d.headDim},
       width},
      {"wq", "heads x head_dim x embed", {d.heads, d.headDim, d.embed}, width},
      {"w1", "ffn x embed", {d.ffn, d.embed}, width},
      {"scores",
       "batch x heads x seq x seq",
       {d.batch, d.heads, d.seq, d.seq},
       width},
      {"softmax_stats",
       "batch x heads x seq",
       {d.batch, d.heads, d.seq},
       statsWidth},
      {"ffn_hidden", "batch x seq x ffn", {d.batch, d.seq, d.ffn}, width},
      {"ln_stats", "batch x seq", {d.batch, d.seq}, statsWidth},
  };
  for (const Tensor &tensor : tensors) {
    uint64_t bytes = tensor.width;
    bool overflow = false;
    for (int64_t size : tensor.sizes)
      overflow |= __builtin_mul_overflow(bytes, uint64_t(size), &bytes);
    if (overflow)
      return fieldError("dims", Twine("tensor '") + tensor.name + "' [" +
                                    tensor.shape +
                                    "] takes more than 2^64 bytes");
  }
  return Error::success();
}

Expected<LayerSpec> SpecParser::parse(const json &root) {
  if (!root.is_object())
    return error(Twine("expected a JSON object at the top level, got ") +
                 kindOf(root));
  static const StringRef allowed[] = {
      "name",     "layer",  "norm",      "norm_type", "causal",
      "dims",     "bias",   "rope",      "activation", "dropout",
      "layernorm_eps", "dtype", "training", "target"};
  if (Error err = checkKnownFields(root, "", allowed))
    return std::move(err);

  LayerSpec spec;
  if (const json *value = find(root, "name")) {
    if (!value->is_string())
      return fieldError("name", "expected a string, got " + describe(*value));
    spec.name = value->get<std::string>();
    if (spec.name.size() > kMaxNameLength)
      return fieldError("name", "the name has " + Twine(spec.name.size()) +
                                    " characters; at most " +
                                    Twine(kMaxNameLength) + " are allowed");
    if (!isValidName(spec.name))
      return fieldError("name", "invalid name " + describe(*value) +
                                    "; a name is one or more of A-Z a-z "
                                    "0-9 _ . -");
  } else {
    spec.name = defaultName();
  }

  if (const json *value = find(root, "layer")) {
    static const StringRef layers[] = {"encoder"};
    Expected<size_t> choice = getChoice(*value, "layer", layers);
    if (!choice)
      return choice.takeError();
    spec.layer = layers[*choice].str();
  }
  if (const json *value = find(root, "norm")) {
    static const StringRef norms[] = {"post", "pre"};
    Expected<size_t> choice = getChoice(*value, "norm", norms);
    if (!choice)
      return choice.takeError();
    spec.norm = *choice == 0 ? NormPlacement::Post : NormPlacement::Pre;
  }
  if (const json *value = find(root, "norm_type")) {
    static const StringRef types[] = {"layernorm", "rmsnorm"};
    Expected<size_t> choice = getChoice(*value, "norm_type", types);
    if (!choice)
      return choice.takeError();
    spec.normType = *choice == 0 ? NormType::LayerNorm : NormType::RMSNorm;
  }
  if (const json *value = find(root, "bias")) {
    Expected<bool> flag = getBool(*value, "bias");
    if (!flag)
      return flag.takeError();
    spec.bias = *flag;
  }
  if (const json *value = find(root, "causal")) {
    Expected<bool> flag = getBool(*value, "causal");
    if (!flag)
      return flag.takeError();
    spec.causal = *flag;
  }

  const json *dims = find(root, "dims");
  if (!dims)
    return fieldError("dims", "required field is missing; it must give "
                              "batch, seq, heads and embed");
  if (!dims->is_object())
    return fieldError("dims", "expected an object, got " + describe(*dims));
  if (Error err = parseDims(*dims, spec.dims))
    return std::move(err);

  if (const json *value = find(root, "rope")) {
    if (!value->is_object())
      return fieldError("rope", "expected an object such as {\"theta\": "
                                "10000.0}, got " +
                                    describe(*value));
    if (Error err = parseRope(*value, spec.dims, spec.ropeTheta))
      return std::move(err);
  }
  if (const json *value = find(root, "activation")) {
    static const StringRef activations[] = {"relu", "gelu", "gelu_tanh",
                                            "silu", "swiglu"};
    static const Activation kinds[] = {Activation::Relu, Activation::Gelu,
                                       Activation::GeluTanh, Activation::Silu,
                                       Activation::SwiGLU};
    Expected<size_t> choice = getChoice(*value, "activation", activations);
    if (!choice)
      return choice.takeError();
    spec.activation = kinds[*choice];
  }
  if (const json *value = find(root, "dropout")) {
    if (!value->is_object())
      return fieldError("dropout", "expected an object with attention, "
                                   "residual and activation, got " +
                                       describe(*value));
    if (Error err = parseDropout(*value, spec.dropout))
      return std::move(err);
  }
  if (const json *value = find(root, "layernorm_eps")) {
    Expected<double> eps = getPositiveNumber(*value, "layernorm_eps");
    if (!eps)
      return eps.takeError();
    spec.layernormEps = *eps;
  }
  if (const json *value = find(root, "dtype")) {
    static const StringRef dtypes[] = {"f32", "f16", "bf16"};
    static const DType kinds[] = {DType::F32, DType::F16, DType::BF16};
    Expected<size_t> choice = getChoice(*value, "dtype", dtypes);
    if (!choice)
      return choice.takeError();
    spec.dtype = kinds[*choice];
  }
  if (const json *value = find(root, "training")) {
    Expected<bool> flag = getBool(*value, "training");
    if (!flag)
      return flag.takeError();
    spec.training = *flag;
  }
  if (const json *value = find(root, "target")) {
    static const StringRef targets[] = {"sm_80",  "sm_86",  "sm_89", "sm_90",
                                        "sm_90a", "sm_100", "sm_120"};
    Expected<size_t> choice = getChoice(*value, "target", targets);
    if (!choice)
      return choice.takeError();
    spec.target = targets[*choice].str();
  }

  if (Error err = checkTensorSizes(spec))
    return std::move(err);
  return spec;
}

Expected<LayerSpec> mlir::sluice::parseLayerSpec(StringRef text,
                                                 StringRef path) {
  if (text.trim().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path +
                                       ": the file is empty; expected a JSON "
                                       "object");
  // Bounded before the parsers see it: nlohmann's DOM nests a value per
  // level, so the depth is checked by a linear scan first.
  if (std::optional<size_t> deep =
          findExcessiveNesting(text, kMaxJsonDepth, /*lineComments=*/false)) {
    auto [line, column] = getLineAndColumn(text, *deep);
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ":" + Twine(line) + ":" + Twine(column) +
            ": invalid JSON: objects and arrays nest deeper than " +
            Twine(kMaxJsonDepth) + " levels");
  }
  SyntaxChecker checker;
  json::sax_parse(text.begin(), text.end(), &checker);
  if (checker.errorPosition) {
    auto [line, column] = getLineAndColumn(text, *checker.errorPosition);
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        path + ":" + Twine(line) + ":" + Twine(column) +
            ": invalid JSON: " + stripNlohmannPrefix(checker.errorMessage) +
            (looksLikeMlir(text) ? "; the file was read as a JSON spec "
                                   "because its name does not end in .mlir"
                                 : ""));
  }
  if (checker.duplicateKey)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": field '" + *checker.duplicateKey +
                                       "': appears more than once");

  json root = json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": invalid JSON");
  Expected<LayerSpec> spec = SpecParser(path).parse(root);
  if (!spec)
    return spec.takeError();
  if (Error err = checkSpecLimits(*spec, path))
    return std::move(err);
  return spec;
}

Expected<LayerSpec> mlir::sluice::readLayerSpec(StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readBoundedFile(path, kMaxSpecFileBytes, "a spec");
  if (!buffer)
    return buffer.takeError();
  return parseLayerSpec((*buffer)->getBuffer(), path);
}
