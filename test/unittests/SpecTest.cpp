//===- SpecTest.cpp - layer spec parsing and the encoder builder ----------===//

#include "sluice/Spec/EncoderBuilder.h"
#include "sluice/Spec/LayerSpec.h"

#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluiceOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

using namespace mlir::sluice;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The message of a failed parse (empty, and a test failure, if it parsed).
std::string parseError(llvm::StringRef text,
                       llvm::StringRef path = "spec.json") {
  llvm::Expected<LayerSpec> spec = parseLayerSpec(text, path);
  if (spec) {
    ADD_FAILURE() << "expected an error for: " << text.str();
    return "";
  }
  return llvm::toString(spec.takeError());
}

LayerSpec parseOk(llvm::StringRef text, llvm::StringRef path = "spec.json") {
  llvm::Expected<LayerSpec> spec = parseLayerSpec(text, path);
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return LayerSpec();
  }
  return *spec;
}

/// The repository root: $SLUICE_SOURCE_DIR, or found from this file's path
/// (absolute, or relative to the build root above bin/).
std::string sourceRoot() {
  if (const char *env = std::getenv("SLUICE_SOURCE_DIR"))
    return env;
  llvm::SmallVector<std::string> candidates;
  std::string thisFile = __FILE__;
  if (llvm::sys::path::is_absolute(thisFile)) {
    candidates.push_back(thisFile);
  } else {
    static int anchor;
    std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
    llvm::SmallString<256> path(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(path, thisFile);
    candidates.push_back(std::string(path));
  }
  for (const std::string &file : candidates) {
    // <root>/test/unittests/SpecTest.cpp
    llvm::SmallString<256> root(file);
    for (int i = 0; i < 3; ++i)
      llvm::sys::path::remove_filename(root);
    llvm::sys::path::remove_dots(root, /*remove_dot_dot=*/true);
    llvm::SmallString<256> tiny(root);
    llvm::sys::path::append(tiny, "examples", "tiny.json");
    if (llvm::sys::fs::exists(tiny))
      return std::string(root);
  }
  return "";
}

std::string examplePath(llvm::StringRef name) {
  llvm::SmallString<256> path(sourceRoot());
  llvm::sys::path::append(path, "examples", name + ".json");
  return std::string(path);
}

const char *kTinyDims =
    R"("dims": {"batch": 2, "seq": 4, "heads": 2, "embed": 8})";

/// A spec with the tiny dims and `extra` top-level members.
std::string withDims(llvm::StringRef extra = "") {
  std::string text = std::string("{") + kTinyDims;
  if (!extra.empty())
    text += ", " + extra.str();
  return text + "}";
}

//===----------------------------------------------------------------------===//
// Parsing: defaults and accepted values
//===----------------------------------------------------------------------===//

TEST(LayerSpecTest, Defaults) {
  LayerSpec spec = parseOk(withDims(), "some/dir/my-layer.json");
  EXPECT_EQ(spec.name, "my-layer");
  EXPECT_EQ(spec.layer, "encoder");
  EXPECT_EQ(spec.norm, NormPlacement::Post);
  EXPECT_FALSE(spec.causal);
  EXPECT_EQ(spec.dims.batch, 2);
  EXPECT_EQ(spec.dims.seq, 4);
  EXPECT_EQ(spec.dims.heads, 2);
  EXPECT_EQ(spec.dims.embed, 8);
  EXPECT_EQ(spec.dims.headDim, 4);
  EXPECT_EQ(spec.dims.ffn, 32);
  EXPECT_EQ(spec.activation, Activation::Gelu);
  EXPECT_DOUBLE_EQ(spec.dropout.attention, 0.1);
  EXPECT_DOUBLE_EQ(spec.dropout.residual, 0.1);
  EXPECT_DOUBLE_EQ(spec.dropout.activation, 0.1);
  EXPECT_DOUBLE_EQ(spec.layernormEps, 1e-5);
  EXPECT_EQ(spec.dtype, DType::F32);
  EXPECT_FALSE(spec.training);
  EXPECT_EQ(spec.target, "sm_80");
}

TEST(LayerSpecTest, DefaultNameReplacesInvalidCharacters) {
  EXPECT_EQ(parseOk(withDims(), "dir/my layer+1.json").name, "my_layer_1");
}

TEST(LayerSpecTest, AllFields) {
  LayerSpec spec = parseOk(R"({
    "name": "g.p-t_2", "layer": "encoder", "norm": "pre", "causal": true,
    "dims": {"batch": 3, "seq": 5, "heads": 4, "head_dim": 6, "embed": 24,
             "ffn": 7},
    "activation": "gelu_tanh",
    "dropout": {"attention": 0, "residual": 0.25, "activation": 0.5},
    "layernorm_eps": 1e-12, "dtype": "bf16", "training": true,
    "target": "sm_90a"})");
  EXPECT_EQ(spec.name, "g.p-t_2");
  EXPECT_EQ(spec.norm, NormPlacement::Pre);
  EXPECT_TRUE(spec.causal);
  EXPECT_EQ(spec.dims.headDim, 6);
  EXPECT_EQ(spec.dims.ffn, 7);
  EXPECT_EQ(spec.activation, Activation::GeluTanh);
  EXPECT_DOUBLE_EQ(spec.dropout.attention, 0.0);
  EXPECT_DOUBLE_EQ(spec.dropout.residual, 0.25);
  EXPECT_DOUBLE_EQ(spec.dropout.activation, 0.5);
  EXPECT_DOUBLE_EQ(spec.layernormEps, 1e-12);
  EXPECT_EQ(spec.dtype, DType::BF16);
  EXPECT_TRUE(spec.training);
  EXPECT_EQ(spec.target, "sm_90a");
}

TEST(LayerSpecTest, EveryTargetAndDType) {
  for (const char *target :
       {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120"})
    EXPECT_EQ(
        parseOk(withDims(std::string(R"("target": ")") + target + "\"")).target,
        target);
  EXPECT_EQ(parseOk(withDims(R"("dtype": "f16")")).dtype, DType::F16);
  EXPECT_EQ(parseOk(withDims(R"("activation": "relu")")).activation,
            Activation::Relu);
}

TEST(LayerSpecTest, Stringify) {
  EXPECT_EQ(stringifyNorm(NormPlacement::Post), "post");
  EXPECT_EQ(stringifyNorm(NormPlacement::Pre), "pre");
  EXPECT_EQ(stringifyActivation(Activation::Relu), "relu");
  EXPECT_EQ(stringifyActivation(Activation::Gelu), "gelu");
  EXPECT_EQ(stringifyActivation(Activation::GeluTanh), "gelu_tanh");
  EXPECT_EQ(stringifyDType(DType::F32), "f32");
  EXPECT_EQ(stringifyDType(DType::F16), "f16");
  EXPECT_EQ(stringifyDType(DType::BF16), "bf16");
  EXPECT_EQ(getByteWidth(DType::F32), 4u);
  EXPECT_EQ(getByteWidth(DType::F16), 2u);
  EXPECT_EQ(getByteWidth(DType::BF16), 2u);
}

//===----------------------------------------------------------------------===//
// Parsing: errors
//===----------------------------------------------------------------------===//

TEST(LayerSpecErrorTest, EmptyFile) {
  EXPECT_EQ(parseError(""),
            "spec.json: the file is empty; expected a JSON object");
  EXPECT_EQ(parseError("  \n\t"),
            "spec.json: the file is empty; expected a JSON object");
}

TEST(LayerSpecErrorTest, SyntaxErrorHasLineAndColumn) {
  std::string message = parseError("{\n  \"dims\": {,}\n}");
  EXPECT_EQ(message.rfind("spec.json:2:12: invalid JSON: ", 0), 0u) << message;
  message = parseError("{\"dims\": {}");
  EXPECT_EQ(message.rfind("spec.json:1:", 0), 0u) << message;
  EXPECT_NE(message.find("invalid JSON"), std::string::npos) << message;
  message = parseError(withDims() + " trailing");
  EXPECT_NE(message.find("invalid JSON"), std::string::npos) << message;
}

TEST(LayerSpecErrorTest, TopLevelNotAnObject) {
  EXPECT_EQ(parseError("[1, 2]"),
            "spec.json: expected a JSON object at the top level, got an "
            "array");
  EXPECT_NE(parseError("42").find("top level"), std::string::npos);
}

TEST(LayerSpecErrorTest, DuplicateField) {
  EXPECT_EQ(parseError(R"({"dims": {"batch": 1, "batch": 2}})"),
            "spec.json: field 'dims.batch': appears more than once");
}

TEST(LayerSpecErrorTest, UnknownFields) {
  EXPECT_EQ(parseError(R"({"dims": {"batch": 2, "seq": 4, "heads": 2,
                                    "embed": 8, "hidden": 8}})"),
            "spec.json: field 'dims.hidden': unknown field; allowed: batch, "
            "seq, heads, head_dim, embed, ffn, kv_heads");
  EXPECT_EQ(parseError(withDims(R"("hidden": 1)")),
            "spec.json: field 'hidden': unknown field; allowed: name, layer, "
            "norm, norm_type, causal, dims, bias, rope, activation, dropout, "
            "layernorm_eps, dtype, training, target");
  EXPECT_EQ(parseError(withDims(R"("dropout": {"ffn": 0.1})")),
            "spec.json: field 'dropout.ffn': unknown field; allowed: "
            "attention, residual, activation");
}

/// Dims with `field` set to the JSON text `value` (removed if empty).
std::string dimsWith(llvm::StringRef field, llvm::StringRef value) {
  llvm::StringMap<std::string> dims = {
      {"batch", "2"}, {"seq", "4"}, {"heads", "2"}, {"embed", "8"}};
  if (value.empty())
    dims.erase(field);
  else
    dims[field] = value.str();
  std::string text = "{\"dims\": {";
  bool first = true;
  for (const char *name :
       {"batch", "seq", "heads", "head_dim", "embed", "ffn"}) {
    if (!dims.count(name))
      continue;
    text += (first ? "\"" : ", \"") + std::string(name) + "\": " + dims[name];
    first = false;
  }
  return text + "}}";
}

TEST(LayerSpecErrorTest, MissingRequiredFields) {
  EXPECT_NE(parseError(R"({"name": "x"})").find("field 'dims': required"),
            std::string::npos);
  EXPECT_EQ(parseError(R"({"dims": {"batch": 2, "seq": 4, "embed": 8}})"),
            "spec.json: field 'dims.heads': required field is missing");
  for (const char *field : {"batch", "seq", "embed"})
    EXPECT_EQ(parseError(dimsWith(field, "")),
              std::string("spec.json: field 'dims.") + field +
                  "': required field is missing");
  EXPECT_NE(parseError(R"({"dims": [2, 4]})")
                .find("field 'dims': expected "
                      "an object"),
            std::string::npos);
}

TEST(LayerSpecErrorTest, DimsMustBePositiveIntegers) {
  EXPECT_EQ(parseError(dimsWith("batch", "\"8\"")),
            "spec.json: field 'dims.batch': expected a positive integer, got "
            "\"8\"");
  for (const char *field :
       {"batch", "seq", "heads", "head_dim", "embed", "ffn"})
    for (const char *value :
         {"0", "-1", "true", "8.0", "8.5", "null", "[8]", "\"8\"",
          "9223372036854775808", "18446744073709551616", "1e30"}) {
      std::string message = parseError(dimsWith(field, value));
      EXPECT_EQ(message.rfind(std::string("spec.json: field 'dims.") + field +
                                  "': expected a positive integer",
                              0),
                0u)
          << field << " = " << value << ": " << message;
    }
}

TEST(LayerSpecErrorTest, NumberOutOfRangeIsASyntaxError) {
  std::string message = parseError(dimsWith("batch", "1e400"));
  EXPECT_EQ(message.rfind("spec.json:1:24: invalid JSON: number overflow", 0),
            0u)
      << message;
}

TEST(LayerSpecErrorTest, HeadDimMustMatchEmbed) {
  EXPECT_EQ(parseError(dimsWith("embed", "9")),
            "spec.json: field 'dims.embed': 9 is not divisible by dims.heads "
            "= 2; the default dims.head_dim is embed / heads");
  EXPECT_EQ(parseError(dimsWith("head_dim", "3")),
            "spec.json: field 'dims.embed': must equal dims.heads x "
            "dims.head_dim = 2 x 3, got 8");
  // heads x head_dim overflows.
  EXPECT_NE(parseError(R"({"dims": {"batch": 1, "seq": 1, "heads": 4294967296,
                        "head_dim": 4294967296, "embed": 8}})")
                .find("field 'dims.embed'"),
            std::string::npos);
}

TEST(LayerSpecErrorTest, Probabilities) {
  for (const char *field : {"attention", "residual", "activation"})
    for (const char *value : {"1", "1.0", "-0.1", "2", "\"0.1\"", "true"}) {
      std::string text = withDims(std::string(R"("dropout": {")") + field +
                                  "\": " + value + "}");
      std::string message = parseError(text);
      EXPECT_EQ(message.rfind(std::string("spec.json: field 'dropout.") +
                                  field + "': expected a probability in [0, 1)",
                              0),
                0u)
          << message;
    }
  EXPECT_NE(parseError(withDims(R"("dropout": 0.1)")).find("field 'dropout'"),
            std::string::npos);
}

TEST(LayerSpecErrorTest, Choices) {
  EXPECT_EQ(parseError(withDims(R"("layer": "decoder")")),
            "spec.json: field 'layer': unknown value \"decoder\"; allowed: "
            "encoder");
  EXPECT_EQ(parseError(withDims(R"("norm": "mid")")),
            "spec.json: field 'norm': unknown value \"mid\"; allowed: post, "
            "pre");
  EXPECT_EQ(parseError(withDims(R"("activation": "swish")")),
            "spec.json: field 'activation': unknown value \"swish\"; allowed: "
            "relu, gelu, gelu_tanh, silu, swiglu");
  EXPECT_EQ(parseError(withDims(R"("dtype": "f64")")),
            "spec.json: field 'dtype': unknown value \"f64\"; allowed: f32, "
            "f16, bf16");
  EXPECT_EQ(parseError(withDims(R"("target": "sm_70")")),
            "spec.json: field 'target': unknown value \"sm_70\"; allowed: "
            "sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_120");
  EXPECT_NE(parseError(withDims(R"("dtype": 16)"))
                .find("field 'dtype': "
                      "expected a string"),
            std::string::npos);
}

TEST(LayerSpecErrorTest, OtherFields) {
  EXPECT_EQ(parseError(withDims(R"("causal": "yes")")),
            "spec.json: field 'causal': expected true or false, got \"yes\"");
  EXPECT_NE(parseError(withDims(R"("training": 1)")).find("field 'training'"),
            std::string::npos);
  for (const char *eps : {"0", "-1e-5", "\"1e-5\""})
    EXPECT_NE(parseError(withDims(std::string(R"("layernorm_eps": )") + eps))
                  .find("field 'layernorm_eps': expected a positive number"),
              std::string::npos);
  EXPECT_NE(parseError(withDims(R"("name": "bad name")")).find("field 'name'"),
            std::string::npos);
  EXPECT_NE(parseError(withDims(R"("name": "")")).find("field 'name'"),
            std::string::npos);
  EXPECT_NE(parseError(withDims(R"("name": 3)")).find("field 'name'"),
            std::string::npos);
}

TEST(LayerSpecTest, LlamaFields) {
  llvm::Expected<LayerSpec> spec = parseLayerSpec(
      R"({"dims": {"batch": 1, "seq": 4, "heads": 4, "kv_heads": 2,
                   "embed": 16},
          "norm_type": "rmsnorm", "activation": "swiglu", "bias": false,
          "rope": {"theta": 500000.0}})",
      "spec.json");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  EXPECT_EQ(spec->dims.kvHeads, 2);
  EXPECT_EQ(spec->normType, NormType::RMSNorm);
  EXPECT_EQ(spec->activation, Activation::SwiGLU);
  EXPECT_FALSE(spec->bias);
  EXPECT_EQ(spec->ropeTheta, 500000.0);
  llvm::Expected<LayerSpec> defaults = parseLayerSpec(
      withDims(R"("rope": {}, "activation": "silu")"), "spec.json");
  ASSERT_TRUE(bool(defaults)) << llvm::toString(defaults.takeError());
  EXPECT_EQ(defaults->dims.kvHeads, 2);
  EXPECT_EQ(defaults->normType, NormType::LayerNorm);
  EXPECT_TRUE(defaults->bias);
  EXPECT_EQ(defaults->ropeTheta, 10000.0);
  EXPECT_EQ(defaults->activation, Activation::Silu);
}

TEST(LayerSpecErrorTest, LlamaFields) {
  EXPECT_EQ(parseError(R"({"dims": {"batch": 2, "seq": 4, "heads": 4,
                                    "kv_heads": 3, "embed": 8}})"),
            "spec.json: field 'dims.kv_heads': must divide dims.heads = 4, "
            "got 3");
  EXPECT_EQ(parseError(R"({"dims": {"batch": 2, "seq": 4, "heads": 4,
                                    "kv_heads": 0, "embed": 8}})"),
            "spec.json: field 'dims.kv_heads': expected a positive integer, "
            "got 0");
  EXPECT_EQ(parseError(R"({"dims": {"batch": 2, "seq": 4, "heads": 2,
                                    "embed": 6}, "rope": {}})"),
            "spec.json: field 'rope': rotary embeddings pair feature d with "
            "d + head_dim / 2, so dims.head_dim must be even, got 3");
  EXPECT_EQ(parseError(withDims(R"("rope": {"theta": 0})")),
            "spec.json: field 'rope.theta': expected a positive number, got 0");
  EXPECT_EQ(parseError(withDims(R"("rope": {"base": 10})")),
            "spec.json: field 'rope.base': unknown field; allowed: theta");
  EXPECT_EQ(parseError(withDims(R"("rope": 10000)")),
            "spec.json: field 'rope': expected an object such as "
            "{\"theta\": 10000.0}, got 10000");
  EXPECT_EQ(parseError(withDims(R"("norm_type": "batchnorm")")),
            "spec.json: field 'norm_type': unknown value \"batchnorm\"; "
            "allowed: layernorm, rmsnorm");
  EXPECT_EQ(parseError(withDims(R"("bias": "no")")),
            "spec.json: field 'bias': expected true or false, got \"no\"");
  EXPECT_EQ(parseError(withDims(R"("activation": "swish")")),
            "spec.json: field 'activation': unknown value \"swish\"; "
            "allowed: relu, gelu, gelu_tanh, silu, swiglu");
}

TEST(LayerSpecErrorTest, TensorSizesOverflow) {
  // x fits (2^33 x 4 bytes) but the scores take 2^66 x 4 bytes.
  EXPECT_EQ(parseError(R"({"dims": {"batch": 1, "seq": 8589934592, "heads": 1,
                                    "embed": 1}})"),
            "spec.json: field 'dims': tensor 'scores' [batch x heads x seq x "
            "seq] takes more than 2^64 bytes");
  // Everything else fits; the FFN activations take 2^80 x 2 bytes.
  EXPECT_EQ(parseError(R"({"dims": {"batch": 1048576, "seq": 1048576,
                                    "heads": 1, "embed": 1,
                                    "ffn": 1099511627776}, "dtype": "f16"})"),
            "spec.json: field 'dims': tensor 'ffn_hidden' [batch x seq x ffn] "
            "takes more than 2^64 bytes");
  EXPECT_NE(parseError(R"({"dims": {"batch": 1, "seq": 1, "heads": 1,
                         "embed": 9223372036854775807, "ffn": 1}})")
                .find("field 'dims': tensor"),
            std::string::npos);
  // The default ffn (4 x embed) does not fit.
  EXPECT_NE(parseError(R"({"dims": {"batch": 1, "seq": 1, "heads": 1,
                         "embed": 4611686018427387904}})")
                .find("field 'dims.ffn'"),
            std::string::npos);
}

TEST(LayerSpecErrorTest, UnreadableFile) {
  llvm::Expected<LayerSpec> spec =
      readLayerSpec("/nonexistent/dir/missing.json");
  ASSERT_FALSE(static_cast<bool>(spec));
  std::string message = llvm::toString(spec.takeError());
  EXPECT_EQ(message.rfind("/nonexistent/dir/missing.json: cannot read the "
                          "file: ",
                          0),
            0u)
      << message;
}

//===----------------------------------------------------------------------===//
// The encoder graph
//===----------------------------------------------------------------------===//

using mlir::sluice::GraphOp;
using mlir::sluice::NamedTensorType;
using mlir::sluice::SluiceDialect;

struct BuiltGraph {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  GraphOp graph;
  /// Ops by their sluice.name.
  llvm::StringMap<mlir::Operation *> ops;
};

BuiltGraph build(mlir::MLIRContext &context, const LayerSpec &spec) {
  BuiltGraph built;
  built.module =
      buildEncoderGraph(context, spec, mlir::UnknownLoc::get(&context));
  if (!built.module) {
    ADD_FAILURE() << "the graph did not build";
    return built;
  }
  built.module->walk([&](GraphOp graph) { built.graph = graph; });
  built.graph.walk([&](mlir::Operation *op) {
    if (auto name = op->getAttrOfType<mlir::StringAttr>(
            SluiceDialect::getOpNameAttrName()))
      EXPECT_TRUE(built.ops.insert({name.getValue(), op}).second)
          << "two ops named " << name.getValue().str();
    else if (!llvm::isa<GraphOp, mlir::sluice::ReturnOp>(op))
      ADD_FAILURE() << "op without a name: "
                    << op->getName().getStringRef().str();
  });
  return built;
}

LayerSpec readExample(llvm::StringRef name) {
  llvm::Expected<LayerSpec> spec = readLayerSpec(examplePath(name));
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return LayerSpec();
  }
  return *spec;
}

std::vector<std::string> dimNames(mlir::Value value) {
  std::vector<std::string> names;
  for (mlir::StringAttr name :
       llvm::cast<NamedTensorType>(value.getType()).getDimNames())
    names.push_back(name.getValue().str());
  return names;
}

TEST(SpecEncoderBuilderTest, ExamplesParseAndVerify) {
  ASSERT_FALSE(sourceRoot().empty()) << "cannot find examples/";
  for (const char *name : {"bert-base", "bert-large", "gpt2-medium", "tiny"}) {
    SCOPED_TRACE(name);
    LayerSpec spec = readExample(name);
    EXPECT_EQ(spec.name, name);
    mlir::MLIRContext context;
    BuiltGraph built = build(context, spec);
    ASSERT_TRUE(built.module);
    EXPECT_EQ(built.graph.getSymName(), name);
    EXPECT_EQ(built.module->getOperation()
                  ->getAttrOfType<mlir::StringAttr>("sluice.spec")
                  .getValue(),
              name);
  }
}

TEST(SpecEncoderBuilderTest, ExampleValues) {
  LayerSpec base = readExample("bert-base");
  EXPECT_EQ(base.dims.batch, 8);
  EXPECT_EQ(base.dims.seq, 512);
  EXPECT_EQ(base.dims.heads, 12);
  EXPECT_EQ(base.dims.headDim, 64);
  EXPECT_EQ(base.dims.embed, 768);
  EXPECT_EQ(base.dims.ffn, 3072);
  EXPECT_EQ(base.dtype, DType::F16);
  EXPECT_TRUE(base.training);
  LayerSpec large = readExample("bert-large");
  EXPECT_EQ(large.dims.heads, 16);
  EXPECT_EQ(large.dims.embed, 1024);
  EXPECT_EQ(large.dims.ffn, 4096);
  EXPECT_EQ(large.norm, NormPlacement::Post);
  EXPECT_EQ(large.activation, Activation::Gelu);
  LayerSpec gpt = readExample("gpt2-medium");
  EXPECT_EQ(gpt.dims.seq, 1024);
  EXPECT_EQ(gpt.norm, NormPlacement::Pre);
  EXPECT_TRUE(gpt.causal);
  EXPECT_EQ(gpt.activation, Activation::GeluTanh);
  LayerSpec tiny = readExample("tiny");
  EXPECT_EQ(tiny.dims.ffn, 16);
  EXPECT_FALSE(tiny.training);
  EXPECT_DOUBLE_EQ(tiny.dropout.attention, 0.0);
}

TEST(SpecEncoderBuilderTest, BoundaryNamesTypesAndShapes) {
  mlir::MLIRContext context;
  LayerSpec spec = parseOk(R"({"name": "t", "dims": {"batch": 2, "seq": 3,
      "heads": 4, "head_dim": 5, "embed": 20, "ffn": 7}, "dtype": "bf16"})");
  BuiltGraph built = build(context, spec);
  ASSERT_TRUE(built.module);
  GraphOp graph = built.graph;
  struct Expected {
    const char *name;
    std::vector<std::string> dims;
    std::vector<int64_t> shape;
  } expected[] = {
      {"x", {"b", "j", "i"}, {2, 3, 20}},
      {"wq", {"h", "p", "i"}, {20, 20}},
      {"bq", {"h", "p"}, {20}},
      {"wk", {"h", "p", "i"}, {20, 20}},
      {"bk", {"h", "p"}, {20}},
      {"wv", {"h", "p", "i"}, {20, 20}},
      {"bv", {"h", "p"}, {20}},
      {"wo", {"i", "h", "p"}, {20, 20}},
      {"bo", {"i"}, {20}},
      {"ln1_scale", {"i"}, {20}},
      {"ln1_bias", {"i"}, {20}},
      {"w1", {"u", "i"}, {7, 20}},
      {"b1", {"u"}, {7}},
      {"w2", {"i", "u"}, {20, 7}},
      {"b2", {"i"}, {20}},
      {"ln2_scale", {"i"}, {20}},
      {"ln2_bias", {"i"}, {20}},
  };
  ASSERT_EQ(graph.getNumArguments(), std::size(expected));
  for (auto [index, want] : llvm::enumerate(expected)) {
    SCOPED_TRACE(want.name);
    EXPECT_EQ(graph.getArgName(index), want.name);
    EXPECT_EQ(dimNames(graph.getArgument(index)), want.dims);
    auto type = llvm::cast<NamedTensorType>(graph.getArgument(index).getType());
    EXPECT_TRUE(type.getElementType().isBF16());
    auto shape = graph.getArgAttrOfType<mlir::DenseI64ArrayAttr>(
        index, SluiceDialect::getShapeAttrName());
    ASSERT_TRUE(shape);
    EXPECT_EQ(std::vector<int64_t>(shape.asArrayRef().begin(),
                                   shape.asArrayRef().end()),
              want.shape);
  }
  ASSERT_EQ(graph.getNumResults(), 1u);
  EXPECT_EQ(graph.getResultName(0), "y");
  EXPECT_EQ(dimNames(graph.getReturnOp().getOperand(0)),
            (std::vector<std::string>{"b", "j", "i"}));
  mlir::Operation *module = built.module->getOperation();
  EXPECT_EQ(module->getAttrOfType<mlir::StringAttr>("sluice.target").getValue(),
            "sm_80");
  EXPECT_EQ(module->getAttrOfType<mlir::StringAttr>("sluice.dtype").getValue(),
            "bf16");
  EXPECT_FALSE(
      module->getAttrOfType<mlir::BoolAttr>("sluice.training").getValue());
}

TEST(SpecEncoderBuilderTest, ContractionDims) {
  mlir::MLIRContext context;
  LayerSpec spec = readExample("bert-large");
  BuiltGraph built = build(context, spec);
  ASSERT_TRUE(built.module);
  auto contract = [&](llvm::StringRef name) {
    return llvm::dyn_cast_or_null<mlir::sluice::ContractOp>(
        built.ops.lookup(name));
  };
  using Dims = std::vector<std::string>;
  auto qk = contract("qk");
  ASSERT_TRUE(qk);
  EXPECT_EQ(dimNames(qk.getLhs()), (Dims{"b", "j", "h", "p"}));
  EXPECT_EQ(dimNames(qk.getRhs()), (Dims{"b", "k", "h", "p"}));
  EXPECT_EQ(dimNames(qk.getResult()), (Dims{"b", "h", "j", "k"}));
  EXPECT_DOUBLE_EQ(qk.getScale().convertToDouble(), 0.125);
  auto av = contract("av");
  ASSERT_TRUE(av);
  EXPECT_EQ(dimNames(av.getLhs()), (Dims{"b", "h", "j", "k"}));
  EXPECT_EQ(dimNames(av.getRhs()), (Dims{"b", "k", "h", "p"}));
  EXPECT_EQ(dimNames(av.getResult()), (Dims{"b", "j", "h", "p"}));
  EXPECT_EQ(dimNames(contract("q_proj").getResult()),
            (Dims{"b", "j", "h", "p"}));
  EXPECT_EQ(dimNames(contract("k_proj").getResult()),
            (Dims{"b", "k", "h", "p"}));
  EXPECT_EQ(dimNames(contract("out_proj").getResult()), (Dims{"b", "j", "i"}));
  EXPECT_EQ(dimNames(contract("ffn1").getResult()), (Dims{"b", "j", "u"}));
  EXPECT_EQ(dimNames(contract("ffn2").getResult()), (Dims{"b", "j", "i"}));
  for (const char *name :
       {"q_proj", "k_proj", "v_proj", "av", "out_proj", "ffn1", "ffn2"})
    EXPECT_DOUBLE_EQ(contract(name).getScale().convertToDouble(), 1.0) << name;
  // The keys and values read x through one rename.
  int renames = 0;
  built.graph.walk([&](mlir::sluice::RenameOp) { ++renames; });
  EXPECT_EQ(renames, 1);
  auto rename = llvm::dyn_cast_or_null<mlir::sluice::RenameOp>(
      built.ops.lookup("x_keys"));
  ASSERT_TRUE(rename);
  EXPECT_EQ(rename.getInput(), built.graph.lookupArgument("x"));
  EXPECT_EQ(dimNames(rename.getResult()), (Dims{"b", "k", "i"}));
  EXPECT_EQ(contract("k_proj").getLhs(), rename.getResult());
  EXPECT_EQ(contract("v_proj").getLhs(), rename.getResult());
}

TEST(SpecEncoderBuilderTest, PostNormStructure) {
  mlir::MLIRContext context;
  BuiltGraph built = build(context, readExample("bert-base"));
  ASSERT_TRUE(built.module);
  const char *names[] = {
      "q_proj", "q_bias",    "x_keys",      "k_proj",      "k_bias",
      "v_proj", "v_bias",    "qk",          "softmax",     "attn_dropout",
      "av",     "out_proj",  "out_bias",    "out_dropout", "residual1",
      "ln1",    "ffn1",      "ffn1_bias",   "activation",  "act_dropout",
      "ffn2",   "ffn2_bias", "ffn_dropout", "residual2",   "ln2"};
  for (const char *name : names)
    EXPECT_TRUE(built.ops.count(name)) << name;
  EXPECT_EQ(built.ops.size(), std::size(names));
  EXPECT_FALSE(built.ops.count("causal_mask"));
  auto ln1 = llvm::cast<mlir::sluice::LayerNormOp>(built.ops.lookup("ln1"));
  auto ln2 = llvm::cast<mlir::sluice::LayerNormOp>(built.ops.lookup("ln2"));
  auto r1 =
      llvm::cast<mlir::sluice::ResidualAddOp>(built.ops.lookup("residual1"));
  EXPECT_EQ(ln1.getInput(), r1.getResult());
  EXPECT_EQ(r1.getLhs(), built.graph.lookupArgument("x"));
  EXPECT_EQ(ln1.getScale(), built.graph.lookupArgument("ln1_scale"));
  EXPECT_DOUBLE_EQ(ln1.getEps().convertToDouble(), 1e-12);
  EXPECT_TRUE(llvm::cast<NamedTensorType>(ln1.getMean().getType())
                  .getElementType()
                  .isF32());
  EXPECT_EQ(dimNames(ln1.getMean()), (std::vector<std::string>{"b", "j"}));
  EXPECT_EQ(built.graph.getReturnOp().getOperand(0), ln2.getResult());
  EXPECT_TRUE(llvm::isa<mlir::sluice::GeluOp>(built.ops.lookup("activation")));
  EXPECT_EQ(
      llvm::cast<mlir::sluice::ContractOp>(built.ops.lookup("ffn1")).getLhs(),
      ln1.getResult());
  // Dropout streams 0..3 in program order.
  std::vector<int64_t> streams;
  built.graph.walk(
      [&](mlir::sluice::DropoutOp op) { streams.push_back(op.getStream()); });
  EXPECT_EQ(streams, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(SpecEncoderBuilderTest, PreNormCausalStructure) {
  mlir::MLIRContext context;
  BuiltGraph built = build(context, readExample("gpt2-medium"));
  ASSERT_TRUE(built.module);
  auto mask = llvm::dyn_cast_or_null<mlir::sluice::CausalMaskOp>(
      built.ops.lookup("causal_mask"));
  ASSERT_TRUE(mask);
  EXPECT_EQ(mask.getQuery(), "j");
  EXPECT_EQ(mask.getKey(), "k");
  EXPECT_EQ(mask.getInput(), built.ops.lookup("qk")->getResult(0));
  EXPECT_EQ(built.ops.lookup("softmax")->getOperand(0), mask.getResult());
  mlir::Value x = built.graph.lookupArgument("x");
  auto ln1 = llvm::cast<mlir::sluice::LayerNormOp>(built.ops.lookup("ln1"));
  auto ln2 = llvm::cast<mlir::sluice::LayerNormOp>(built.ops.lookup("ln2"));
  auto r1 =
      llvm::cast<mlir::sluice::ResidualAddOp>(built.ops.lookup("residual1"));
  auto r2 =
      llvm::cast<mlir::sluice::ResidualAddOp>(built.ops.lookup("residual2"));
  EXPECT_EQ(ln1.getInput(), x);
  EXPECT_EQ(built.ops.lookup("q_proj")->getOperand(0), ln1.getResult());
  EXPECT_EQ(built.ops.lookup("x_keys")->getOperand(0), ln1.getResult());
  EXPECT_EQ(r1.getLhs(), x);
  EXPECT_EQ(ln2.getInput(), r1.getResult());
  EXPECT_EQ(built.ops.lookup("ffn1")->getOperand(0), ln2.getResult());
  EXPECT_EQ(r2.getLhs(), r1.getResult());
  EXPECT_EQ(r2.getRhs(), built.ops.lookup("ffn_dropout")->getResult(0));
  EXPECT_EQ(built.graph.getReturnOp().getOperand(0), r2.getResult());
  EXPECT_TRUE(
      llvm::isa<mlir::sluice::GeluTanhOp>(built.ops.lookup("activation")));
  // GPT-2 has no dropout after the activation; the streams stay per site.
  std::vector<int64_t> streams;
  built.graph.walk(
      [&](mlir::sluice::DropoutOp op) { streams.push_back(op.getStream()); });
  EXPECT_EQ(streams, (std::vector<int64_t>{0, 1, 3}));
}

TEST(SpecEncoderBuilderTest, DropoutOnlyWhenTrainingWithNonzeroProbability) {
  mlir::MLIRContext context;
  BuiltGraph inference = build(context, readExample("tiny"));
  ASSERT_TRUE(inference.module);
  int dropouts = 0;
  inference.graph.walk([&](mlir::sluice::DropoutOp) { ++dropouts; });
  EXPECT_EQ(dropouts, 0);
  EXPECT_TRUE(llvm::isa<mlir::sluice::ResidualAddOp>(
      inference.ops.lookup("residual1")));

  LayerSpec spec = parseOk(withDims(R"("training": true, "activation": "relu",
      "dropout": {"attention": 0.2, "residual": 0, "activation": 0.3})"));
  BuiltGraph built = build(context, spec);
  ASSERT_TRUE(built.module);
  std::vector<std::pair<std::string, int64_t>> sites;
  built.graph.walk([&](mlir::sluice::DropoutOp op) {
    sites.push_back(
        {op->getAttrOfType<mlir::StringAttr>(SluiceDialect::getOpNameAttrName())
             .getValue()
             .str(),
         op.getStream()});
  });
  EXPECT_EQ(sites, (std::vector<std::pair<std::string, int64_t>>{
                       {"attn_dropout", 0}, {"act_dropout", 2}}));
  auto attn =
      llvm::cast<mlir::sluice::DropoutOp>(built.ops.lookup("attn_dropout"));
  EXPECT_DOUBLE_EQ(attn.getProbability().convertToDouble(), 0.2);
  EXPECT_TRUE(llvm::isa<mlir::sluice::ReluOp>(built.ops.lookup("activation")));
}

} // namespace
