//===- EncoderBuilder.cpp - layer spec to sluice graph --------------------===//
//
// Builds the forward graph of one encoder layer (docs/SpecFormat.md gives
// the exact semantics). Dimensions: b batch, j query position, k key
// position, h head, p head feature, i embedding feature, u FFN feature; with
// grouped-query attention g key/value head and e query head within its
// group (h = g * E + e); with rotary embeddings the query/key feature p is
// held as r (which half) and f (feature within the half), p = r * F + f.
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

SmallVector<StringRef> queryHeadDims(const LayerSpec &spec);
SmallVector<StringRef> kvHeadDims(const LayerSpec &spec);
SmallVector<StringRef> qkFeatureDims(const LayerSpec &spec);

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
    if (name == "g")
      return d.kvHeads;
    if (name == "e")
      return d.heads / d.kvHeads;
    if (name == "p")
      return d.headDim;
    if (name == "r")
      return 2;
    if (name == "f")
      return d.headDim / 2;
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

  /// Adds the boundary bias `bias` when the spec has linear biases.
  Value biasAdd(GraphOp graph, StringRef opName, Value input, StringRef bias) {
    if (!spec.bias)
      return input;
    return name(BiasAddOp::create(builder, loc, input.getType(), input,
                                  graph.lookupArgument(bias)),
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

  /// Layernorm or RMSNorm over i with the boundary `<prefix>_scale` (and
  /// `<prefix>_bias` for layernorm).
  Value norm(GraphOp graph, StringRef prefix, Value input) {
    NamedTensorType stats = type({"b", "j"}, builder.getF32Type());
    Value scale = graph.lookupArgument((prefix + "_scale").str());
    if (spec.normType == NormType::RMSNorm) {
      auto op = RMSNormOp::create(builder, loc, input.getType(), stats, input,
                                  scale, builder.getStrArrayAttr({"i"}),
                                  builder.getF64FloatAttr(spec.layernormEps));
      return name(op, prefix).getResult();
    }
    Value bias = graph.lookupArgument((prefix + "_bias").str());
    auto op =
        LayerNormOp::create(builder, loc, input.getType(), stats, stats, input,
                            scale, bias, builder.getStrArrayAttr({"i"}),
                            builder.getF64FloatAttr(spec.layernormEps));
    return name(op, prefix).getResult();
  }

  /// Rotary embedding of `input` (which holds r and f) along `position`,
  /// when the spec has one.
  Value rope(StringRef opName, Value input, StringRef position) {
    if (spec.ropeTheta <= 0.0)
      return input;
    return name(RopeOp::create(builder, loc, input.getType(), input,
                               builder.getStringAttr("r"),
                               builder.getStringAttr("f"),
                               builder.getStringAttr(position),
                               builder.getF64FloatAttr(spec.ropeTheta)),
                opName);
  }

  /// Multi-head self-attention of `input` [b, j, i], before the residual.
  /// Keys and values have the key/value head dimensions only: a query head
  /// reads its group's key/value head by name (batch dimension g of the
  /// contractions), never through a copy.
  Value attention(GraphOp graph, Value input) {
    auto arg = [&](StringRef argName) { return graph.lookupArgument(argName); };
    SmallVector<StringRef> qHeads = queryHeadDims(spec),
                           kvHeads = kvHeadDims(spec),
                           qkFeature = qkFeatureDims(spec);
    auto dims = [](std::initializer_list<ArrayRef<StringRef>> parts) {
      SmallVector<StringRef> all;
      for (ArrayRef<StringRef> part : parts)
        all.append(part.begin(), part.end());
      return all;
    };
    StringRef b = "b", j = "j", k = "k", p = "p", i = "i";
    Value q = contract("q_proj", input, arg("wq"), dims({b, j, qHeads, qkFeature}));
    q = biasAdd(graph, "q_bias", q, "bq");
    q = rope("q_rope", q, "j");
    Value keys = name(
        RenameOp::create(builder, loc, type({"b", "k", "i"}), input), "x_keys");
    Value kt = contract("k_proj", keys, arg("wk"), dims({b, k, kvHeads, qkFeature}));
    kt = biasAdd(graph, "k_bias", kt, "bk");
    kt = rope("k_rope", kt, "k");
    Value v = contract("v_proj", keys, arg("wv"), dims({b, k, kvHeads, p}));
    v = biasAdd(graph, "v_bias", v, "bv");
    Value scores = contract("qk", q, kt, dims({b, qHeads, j, k}),
                            1.0 / std::sqrt(double(spec.dims.headDim)));
    if (spec.causal)
      scores = name(CausalMaskOp::create(builder, loc, scores, "j", "k"),
                    "causal_mask");
    Value probs = name(SoftmaxOp::create(builder, loc, scores.getType(), scores,
                                         builder.getStringAttr("k")),
                       "softmax");
    probs = dropout("attn_dropout", probs, spec.dropout.attention, 0);
    Value context = contract("av", probs, v, dims({b, j, qHeads, p}));
    Value out = contract("out_proj", context, arg("wo"), {b, j, i});
    out = biasAdd(graph, "out_bias", out, "bo");
    return dropout("out_dropout", out, spec.dropout.residual, 1);
  }

  /// The position-wise feed-forward block of `input` [b, j, i], before the
  /// residual.
  Value feedForward(GraphOp graph, Value input) {
    auto arg = [&](StringRef argName) { return graph.lookupArgument(argName); };
    Value hidden = contract("ffn1", input, arg("w1"), {"b", "j", "u"});
    hidden = biasAdd(graph, "ffn1_bias", hidden, "b1");
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
    case Activation::Silu:
      activation = SiluOp::create(builder, loc, hidden);
      break;
    case Activation::SwiGLU: {
      Value up = contract("ffn3", input, arg("w3"), {"b", "j", "u"});
      up = biasAdd(graph, "ffn3_bias", up, "b3");
      activation = SwiGLUOp::create(builder, loc, hidden, up);
      break;
    }
    }
    hidden = name(activation, "activation")->getResult(0);
    hidden = dropout("act_dropout", hidden, spec.dropout.activation, 2);
    Value out = contract("ffn2", hidden, arg("w2"), {"b", "j", "i"});
    out = biasAdd(graph, "ffn2_bias", out, "b2");
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

/// The dimensions of a query head: h, or (g, e) with grouped-query attention.
SmallVector<StringRef> queryHeadDims(const LayerSpec &spec) {
  if (spec.dims.kvHeads == spec.dims.heads)
    return {"h"};
  return {"g", "e"};
}

/// The dimensions of a key/value head: h, or g with grouped-query attention.
SmallVector<StringRef> kvHeadDims(const LayerSpec &spec) {
  if (spec.dims.kvHeads == spec.dims.heads)
    return {"h"};
  return {"g"};
}

/// The feature dimensions of queries and keys: p, or (r, f) with rotary
/// embeddings (the same memory: p = r * head_dim / 2 + f).
SmallVector<StringRef> qkFeatureDims(const LayerSpec &spec) {
  if (spec.ropeTheta > 0.0)
    return {"r", "f"};
  return {"p"};
}

/// The boundary arguments of the layer, in order (docs/SpecFormat.md).
SmallVector<Boundary> getBoundaryArguments(const LayerSpec &spec) {
  const LayerDims &d = spec.dims;
  int64_t kvWidth = d.kvHeads * d.headDim;
  auto concat = [](std::initializer_list<ArrayRef<StringRef>> parts) {
    SmallVector<StringRef, 4> all;
    for (ArrayRef<StringRef> part : parts)
      all.append(part.begin(), part.end());
    return all;
  };
  SmallVector<StringRef> qHeads = queryHeadDims(spec),
                         kvHeads = kvHeadDims(spec),
                         qkFeature = qkFeatureDims(spec);
  StringRef p = "p", i = "i";
  SmallVector<Boundary> all = {
      {"x", {"b", "j", "i"}, {d.batch, d.seq, d.embed}},
      {"wq", concat({qHeads, qkFeature, i}), {d.embed, d.embed}},
      {"bq", concat({qHeads, qkFeature}), {d.embed}},
      {"wk", concat({kvHeads, qkFeature, i}), {kvWidth, d.embed}},
      {"bk", concat({kvHeads, qkFeature}), {kvWidth}},
      {"wv", concat({kvHeads, p, i}), {kvWidth, d.embed}},
      {"bv", concat({kvHeads, p}), {kvWidth}},
      {"wo", concat({i, qHeads, p}), {d.embed, d.embed}},
      {"bo", {"i"}, {d.embed}},
      {"ln1_scale", {"i"}, {d.embed}},
      {"ln1_bias", {"i"}, {d.embed}},
      {"w1", {"u", "i"}, {d.ffn, d.embed}},
      {"b1", {"u"}, {d.ffn}},
      {"w3", {"u", "i"}, {d.ffn, d.embed}},
      {"b3", {"u"}, {d.ffn}},
      {"w2", {"i", "u"}, {d.embed, d.ffn}},
      {"b2", {"i"}, {d.embed}},
      {"ln2_scale", {"i"}, {d.embed}},
      {"ln2_bias", {"i"}, {d.embed}},
  };
  bool swiglu = spec.activation == Activation::SwiGLU;
  bool rms = spec.normType == NormType::RMSNorm;
  return llvm::to_vector(llvm::make_filter_range(all, [&](const Boundary &b) {
    StringRef n = b.name;
    bool isBias = n.size() == 2 && n[0] == 'b';
    if (isBias && !spec.bias)
      return false;
    if ((n == "w3" || n == "b3") && !swiglu)
      return false;
    return !(rms && n.ends_with("_bias"));
  }));
}

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
                                        const LayerSpec &given, Location loc) {
  // A spec built in code may leave kv_heads unset (0): one per query head.
  LayerSpec spec = given;
  if (spec.dims.kvHeads <= 0)
    spec.dims.kvHeads = spec.dims.heads;
  if (spec.dims.heads % spec.dims.kvHeads != 0) {
    emitError(loc) << "layer spec '" << spec.name << "': kv_heads "
                   << spec.dims.kvHeads << " does not divide heads "
                   << spec.dims.heads;
    return nullptr;
  }
  if (spec.ropeTheta > 0 && spec.dims.headDim % 2 != 0) {
    emitError(loc) << "layer spec '" << spec.name
                   << "': rotary embeddings need an even head_dim, got "
                   << spec.dims.headDim;
    return nullptr;
  }
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
  SmallVector<Boundary> arguments = getBoundaryArguments(spec);
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
    Value x1 = layer.norm(graph, "ln1", r1);
    Value r2 = layer.residual("residual2", x1, layer.feedForward(graph, x1));
    y = layer.norm(graph, "ln2", r2);
  } else {
    // GPT-2, LLaMA: r = x + drop(attn(ln1(x))); y = r + drop(ffn(ln2(r))).
    Value h = layer.norm(graph, "ln1", x);
    Value r = layer.residual("residual1", x, layer.attention(graph, h));
    Value h2 = layer.norm(graph, "ln2", r);
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
