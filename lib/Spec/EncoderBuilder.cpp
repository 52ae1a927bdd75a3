//===- EncoderBuilder.cpp - layer spec to sluice graph --------------------===//
//
// Builds the forward graph of one encoder layer (docs/SpecFormat.md gives
// the exact semantics). Dimensions: b batch, j query position, k key
// position, h head, p head feature, i embedding feature, u FFN feature.
//
//===----------------------------------------------------------------------===//

#include "sluice/Spec/EncoderBuilder.h"

#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluiceOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// Builds the ops of one layer into a graph body, naming each op.
class EncoderBuilder {
public:
  EncoderBuilder(OpBuilder &builder, Location loc, const LayerSpec &spec,
                 Type elementType)
      : builder(builder), loc(loc), spec(spec), elementType(elementType) {}

  /// A tensor type over the named dimensions, in the given layout.
  NamedTensorType type(ArrayRef<StringRef> names, Type element = {}) const {
    SmallVector<std::pair<StringRef, int64_t>> dims;
    for (StringRef name : names)
      dims.push_back({name, size(name)});
    return NamedTensorType::get(builder.getContext(), dims,
                                element ? element : elementType);
  }

  int64_t size(StringRef name) const {
    const LayerDims &d = spec.dims;
    if (name == "b")
      return d.batch;
    if (name == "j" || name == "k")
      return d.seq;
    if (name == "h")
      return d.heads;
    if (name == "p")
      return d.headDim;
    if (name == "i")
      return d.embed;
    if (name == "u")
      return d.ffn;
    llvm_unreachable("unknown dimension name");
  }

  /// Gives `op` its report name and returns it.
  template <typename OpTy>
  OpTy name(OpTy op, StringRef opName) {
    op->setAttr(SluiceDialect::getOpNameAttrName(),
                builder.getStringAttr(opName));
    return op;
  }

  Value contract(StringRef opName, Value lhs, Value rhs,
                 ArrayRef<StringRef> resultDims, double scale = 1.0) {
    return name(ContractOp::create(builder, loc, type(resultDims), lhs, rhs,
                                   builder.getF64FloatAttr(scale)),
                opName);
  }

  Value biasAdd(StringRef opName, Value input, Value bias) {
    return name(BiasAddOp::create(builder, loc, input.getType(), input, bias),
                opName);
  }

  /// Dropout at one of the four sites, if the spec trains with a nonzero
  /// probability there; otherwise `input` unchanged.
  Value dropout(StringRef opName, Value input, double probability,
                int64_t stream) {
    if (!spec.training || probability <= 0.0)
      return input;
    auto op = DropoutOp::create(builder, loc, input.getType(), input.getType(),
                                input, builder.getF64FloatAttr(probability),
                                builder.getI64IntegerAttr(stream));
    return name(op, opName).getResult();
  }

  Value layerNorm(StringRef opName, Value input, Value scale, Value bias) {
    NamedTensorType stats = type({"b", "j"}, builder.getF32Type());
    auto op =
        LayerNormOp::create(builder, loc, input.getType(), stats, stats, input,
                            scale, bias, builder.getStrArrayAttr({"i"}),
                            builder.getF64FloatAttr(spec.layernormEps));
    return name(op, opName).getResult();
  }

  /// Multi-head self-attention of `input` [b, j, i], before the residual.
  Value attention(GraphOp graph, Value input) {
    auto arg = [&](StringRef argName) { return graph.lookupArgument(argName); };
    Value q = contract("q_proj", input, arg("wq"), {"b", "j", "h", "p"});
    q = biasAdd("q_bias", q, arg("bq"));
    Value keys = name(
        RenameOp::create(builder, loc, type({"b", "k", "i"}), input), "x_keys");
    Value k = contract("k_proj", keys, arg("wk"), {"b", "k", "h", "p"});
    k = biasAdd("k_bias", k, arg("bk"));
    Value v = contract("v_proj", keys, arg("wv"), {"b", "k", "h", "p"});
    v = biasAdd("v_bias", v, arg("bv"));
    Value scores = contract("qk", q, k, {"b", "h", "j", "k"},
                            1.0 / std::sqrt(double(spec.dims.headDim)));
    if (spec.causal)
      scores = name(CausalMaskOp::create(builder, loc, scores, "j", "k"),
                    "causal_mask");
    Value probs = name(SoftmaxOp::create(builder, loc, scores.getType(), scores,
                                         builder.getStringAttr("k")),
                       "softmax");
    probs = dropout("attn_dropout", probs, spec.dropout.attention, 0);
    Value context = contract("av", probs, v, {"b", "j", "h", "p"});
    Value out = contract("out_proj", context, arg("wo"), {"b", "j", "i"});
    out = biasAdd("out_bias", out, arg("bo"));
    return dropout("out_dropout", out, spec.dropout.residual, 1);
  }

  /// The position-wise feed-forward block of `input` [b, j, i], before the
  /// residual.
  Value feedForward(GraphOp graph, Value input) {
    auto arg = [&](StringRef argName) { return graph.lookupArgument(argName); };
    Value hidden = contract("ffn1", input, arg("w1"), {"b", "j", "u"});
    hidden = biasAdd("ffn1_bias", hidden, arg("b1"));
    Operation *activation;
    switch (spec.activation) {
    case Activation::Relu:
      activation = ReluOp::create(builder, loc, hidden);
      break;
    case Activation::Gelu:
      activation = GeluOp::create(builder, loc, hidden);
      break;
    case Activation::GeluTanh:
      activation = GeluTanhOp::create(builder, loc, hidden);
      break;
    }
    hidden = name(activation, "activation")->getResult(0);
    hidden = dropout("act_dropout", hidden, spec.dropout.activation, 2);
    Value out = contract("ffn2", hidden, arg("w2"), {"b", "j", "i"});
    out = biasAdd("ffn2_bias", out, arg("b2"));
    return dropout("ffn_dropout", out, spec.dropout.residual, 3);
  }

  Value residual(StringRef opName, Value lhs, Value rhs) {
    return name(ResidualAddOp::create(builder, loc, lhs.getType(), lhs, rhs),
                opName);
  }

private:
  OpBuilder &builder;
  Location loc;
  const LayerSpec &spec;
  Type elementType;
};

/// A boundary tensor: canonical name, named dimensions, PyTorch shape.
struct Boundary {
  StringRef name;
  SmallVector<StringRef, 4> dims;
  SmallVector<int64_t, 3> shape;
};

} // namespace

static Type getElementType(MLIRContext &context, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return Float32Type::get(&context);
  case DType::F16:
    return Float16Type::get(&context);
  case DType::BF16:
    return BFloat16Type::get(&context);
  }
  llvm_unreachable("unknown dtype");
}

namespace mlir::sluice {
OwningOpRef<ModuleOp> buildEncoderGraph(MLIRContext &context,
                                        const LayerSpec &spec, Location loc) {
  context.getOrLoadDialect<SluiceDialect>();
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder, loc);
  module->getOperation()->setAttr("sluice.target",
                                  builder.getStringAttr(spec.target));
  module->getOperation()->setAttr(
      "sluice.dtype", builder.getStringAttr(stringifyDType(spec.dtype)));
  module->getOperation()->setAttr("sluice.training",
                                  builder.getBoolAttr(spec.training));
  module->getOperation()->setAttr("sluice.spec",
                                  builder.getStringAttr(spec.name));

  const LayerDims &d = spec.dims;
  const Boundary arguments[] = {
      {"x", {"b", "j", "i"}, {d.batch, d.seq, d.embed}},
      {"wq", {"h", "p", "i"}, {d.embed, d.embed}},
      {"bq", {"h", "p"}, {d.embed}},
      {"wk", {"h", "p", "i"}, {d.embed, d.embed}},
      {"bk", {"h", "p"}, {d.embed}},
      {"wv", {"h", "p", "i"}, {d.embed, d.embed}},
      {"bv", {"h", "p"}, {d.embed}},
      {"wo", {"i", "h", "p"}, {d.embed, d.embed}},
      {"bo", {"i"}, {d.embed}},
      {"ln1_scale", {"i"}, {d.embed}},
      {"ln1_bias", {"i"}, {d.embed}},
      {"w1", {"u", "i"}, {d.ffn, d.embed}},
      {"b1", {"u"}, {d.ffn}},
      {"w2", {"i", "u"}, {d.embed, d.ffn}},
      {"b2", {"i"}, {d.embed}},
      {"ln2_scale", {"i"}, {d.embed}},
      {"ln2_bias", {"i"}, {d.embed}},
  };
  const Boundary result = {"y", {"b", "j", "i"}, {d.batch, d.seq, d.embed}};

  Type elementType = getElementType(context, spec.dtype);
  EncoderBuilder layer(builder, loc, spec, elementType);
  SmallVector<StringRef> argNames;
  SmallVector<Type> argTypes;
  for (const Boundary &arg : arguments) {
    argNames.push_back(arg.name);
    argTypes.push_back(layer.type(arg.dims));
  }
  Type resultType = layer.type(result.dims);

  builder.setInsertionPointToEnd(module->getBody());
  auto graph = GraphOp::create(builder, loc, spec.name, argNames, argTypes,
                               ArrayRef<StringRef>(result.name),
                               TypeRange(ArrayRef<Type>(resultType)));
  for (auto [index, arg] : llvm::enumerate(arguments))
    graph.setArgAttr(index, SluiceDialect::getShapeAttrName(),
                     builder.getDenseI64ArrayAttr(arg.shape));
  graph.setResultAttr(0, SluiceDialect::getShapeAttrName(),
                      builder.getDenseI64ArrayAttr(result.shape));

  builder.setInsertionPointToEnd(&graph.getBody().front());
  auto arg = [&](StringRef argName) { return graph.lookupArgument(argName); };
  Value x = arg("x");
  Value y;
  if (spec.norm == NormPlacement::Post) {
    // BERT: x1 = ln1(x + drop(attn(x))); y = ln2(x1 + drop(ffn(x1))).
    Value r1 = layer.residual("residual1", x, layer.attention(graph, x));
    Value x1 = layer.layerNorm("ln1", r1, arg("ln1_scale"), arg("ln1_bias"));
    Value r2 = layer.residual("residual2", x1, layer.feedForward(graph, x1));
    y = layer.layerNorm("ln2", r2, arg("ln2_scale"), arg("ln2_bias"));
  } else {
    // GPT-2: r = x + drop(attn(ln1(x))); y = r + drop(ffn(ln2(r))).
    Value h = layer.layerNorm("ln1", x, arg("ln1_scale"), arg("ln1_bias"));
    Value r = layer.residual("residual1", x, layer.attention(graph, h));
    Value h2 = layer.layerNorm("ln2", r, arg("ln2_scale"), arg("ln2_bias"));
    y = layer.residual("residual2", r, layer.feedForward(graph, h2));
  }
  ReturnOp::create(builder, loc, ValueRange{y});

  if (failed(verify(module->getOperation()))) {
    emitError(loc) << "the graph built from layer spec '" << spec.name
                   << "' failed to verify";
    return nullptr;
  }
  return module;
}
} // namespace mlir::sluice
