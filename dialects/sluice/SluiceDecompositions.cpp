//===- SluiceDecompositions.cpp - composites as primitives ----------------===//
//
// The definition of every composite op as a small graph of primitives. The
// reference interpreter, the accounting and --sluice-decompose all use these,
// so a composite means exactly what its decomposition computes.
//
// Divisions by a softmax sum, an element count, 1 + exp(-x) or 1 - p (a
// divisor at least 2^-32, never subnormal) carry fastmath<arcp>: generated
// kernels may multiply by the correctly rounded reciprocal instead
// (docs/Codegen.md, "Divisions"); the interpreter divides.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluiceDecompositions.h"
#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/SluiceOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::sluice;

using Decomposition = FailureOr<SmallVector<Value>>;

/// Statistics (row max, sums, mean, rstd) are kept in f32 whatever the
/// storage type, as a fused kernel keeps them in registers.
static Type statisticsType(MLIRContext *context) {
  return Float32Type::get(context);
}

static SmallVector<StringRef> toStringRefs(ArrayAttr names) {
  return llvm::map_to_vector(names, [](Attribute attr) {
    return llvm::cast<StringAttr>(attr).getValue();
  });
}

Decomposition BiasAddOp::decompose(OpBuilder &builder, FloatType computeType) {
  Value sum = buildMap(
      builder, getLoc(), getResult().getType(), {getInput(), getBias()},
      computeType, [](OpBuilder &b, Location loc, ValueRange args) {
        return arith::AddFOp::create(b, loc, args[0], args[1]).getResult();
      });
  return SmallVector<Value>{sum};
}

Decomposition ResidualAddOp::decompose(OpBuilder &builder,
                                       FloatType computeType) {
  Value sum = buildMap(
      builder, getLoc(), getResult().getType(), {getLhs(), getRhs()},
      computeType, [](OpBuilder &b, Location loc, ValueRange args) {
        return arith::AddFOp::create(b, loc, args[0], args[1]).getResult();
      });
  return SmallVector<Value>{sum};
}

Decomposition SoftmaxOp::decompose(OpBuilder &builder, FloatType computeType) {
  Location loc = getLoc();
  NamedTensorType type = getResult().getType();
  Type stats = statisticsType(getContext());
  Value max =
      buildReduce(builder, loc, ReduceKind::max, getInput(), {getDim()}, stats);
  Value exp =
      buildMap(builder, loc, type, {getInput(), max}, computeType,
               [](OpBuilder &b, Location loc, ValueRange args) {
                 Value shifted =
                     arith::SubFOp::create(b, loc, args[0], args[1]);
                 return math::ExpOp::create(b, loc, shifted).getResult();
               });
  Value sum =
      buildReduce(builder, loc, ReduceKind::sum, exp, {getDim()}, stats);
  Value normalized = buildMap(
      builder, loc, type, {exp, sum}, computeType,
      [](OpBuilder &b, Location loc, ValueRange args) {
        return arith::DivFOp::create(b, loc, args[0], args[1],
                                     arith::FastMathFlags::arcp)
            .getResult();
      });
  return SmallVector<Value>{normalized};
}

/// The number of elements a normalization over `dims` averages.
static double countElements(NamedTensorType type, ArrayRef<StringRef> dims) {
  double count = 1;
  for (StringRef dim : dims)
    count *= static_cast<double>(type.getDimSize(dim));
  return count;
}

/// rstd = rsqrt(sumSquares / count + eps): the statistic of layernorm (the
/// sum of centered squares) and of RMSNorm (the sum of squares).
static Value buildRstd(OpBuilder &builder, Location loc, NamedTensorType type,
                       Value sumSquares, FloatType computeType, double count,
                       double eps) {
  return buildMap(builder, loc, type, {sumSquares}, computeType,
                  [&](OpBuilder &b, Location loc, ValueRange args) {
                    Value n = buildConstant(b, loc, computeType, count);
                    Value mean = arith::DivFOp::create(
                        b, loc, args[0], n, arith::FastMathFlags::arcp);
                    Value shifted = arith::AddFOp::create(
                        b, loc, mean, buildConstant(b, loc, computeType, eps));
                    return math::RsqrtOp::create(b, loc, shifted).getResult();
                  });
}

Decomposition LayerNormOp::decompose(OpBuilder &builder,
                                     FloatType computeType) {
  Location loc = getLoc();
  SmallVector<StringRef> dims = toStringRefs(getDims());
  NamedTensorType inputType = getInput().getType();
  double count = countElements(inputType, dims);
  Type stats = statisticsType(getContext());

  Value sum =
      buildReduce(builder, loc, ReduceKind::sum, getInput(), dims, stats);
  Value mean =
      buildMap(builder, loc, getMean().getType(), {sum}, computeType,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 Value n = buildConstant(b, loc, computeType, count);
                 return arith::DivFOp::create(b, loc, args[0], n,
                                              arith::FastMathFlags::arcp)
                     .getResult();
               });
  Value squares = buildMap(
      builder, loc, inputType.withElementType(stats), {getInput(), mean},
      computeType, [](OpBuilder &b, Location loc, ValueRange args) {
        Value centered = arith::SubFOp::create(b, loc, args[0], args[1]);
        return arith::MulFOp::create(b, loc, centered, centered).getResult();
      });
  Value sumSquares =
      buildReduce(builder, loc, ReduceKind::sum, squares, dims, stats);
  Value rstd = buildRstd(builder, loc, getRstd().getType(), sumSquares,
                         computeType, count, getEps().convertToDouble());
  Value normalized = buildMap(
      builder, loc, getResult().getType(),
      {getInput(), mean, rstd, getScale(), getBias()}, computeType,
      [](OpBuilder &b, Location loc, ValueRange args) {
        Value centered = arith::SubFOp::create(b, loc, args[0], args[1]);
        Value scaled = arith::MulFOp::create(b, loc, centered, args[2]);
        Value weighted = arith::MulFOp::create(b, loc, scaled, args[3]);
        return arith::AddFOp::create(b, loc, weighted, args[4]).getResult();
      });
  return SmallVector<Value>{normalized, mean, rstd};
}

Decomposition RMSNormOp::decompose(OpBuilder &builder,
                                   FloatType computeType) {
  Location loc = getLoc();
  SmallVector<StringRef> dims = toStringRefs(getDims());
  NamedTensorType inputType = getInput().getType();
  double count = countElements(inputType, dims);
  Type stats = statisticsType(getContext());

  Value squares = buildMap(
      builder, loc, inputType.withElementType(stats), {getInput()},
      computeType, [](OpBuilder &b, Location loc, ValueRange args) {
        return arith::MulFOp::create(b, loc, args[0], args[0]).getResult();
      });
  Value sumSquares =
      buildReduce(builder, loc, ReduceKind::sum, squares, dims, stats);
  Value rstd = buildRstd(builder, loc, getRstd().getType(), sumSquares,
                         computeType, count, getEps().convertToDouble());
  Value normalized = buildMap(
      builder, loc, getResult().getType(), {getInput(), rstd, getScale()},
      computeType, [](OpBuilder &b, Location loc, ValueRange args) {
        Value scaled = arith::MulFOp::create(b, loc, args[0], args[1]);
        return arith::MulFOp::create(b, loc, scaled, args[2]).getResult();
      });
  return SmallVector<Value>{normalized, rstd};
}

/// silu(x) = x / (1 + exp(-x)), in the compute type.
static Value buildSilu(OpBuilder &b, Location loc, FloatType computeType,
                       Value x) {
  Value negated = arith::NegFOp::create(b, loc, x);
  Value exp = math::ExpOp::create(b, loc, negated);
  Value onePlus = arith::AddFOp::create(
      b, loc, exp, buildConstant(b, loc, computeType, 1.0));
  return arith::DivFOp::create(b, loc, x, onePlus, arith::FastMathFlags::arcp);
}

Decomposition SiluOp::decompose(OpBuilder &builder, FloatType computeType) {
  Value result = buildMap(
      builder, getLoc(), getResult().getType(), {getInput()}, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        return buildSilu(b, loc, computeType, args[0]);
      });
  return SmallVector<Value>{result};
}

Decomposition SwiGLUOp::decompose(OpBuilder &builder, FloatType computeType) {
  Value result = buildMap(
      builder, getLoc(), getResult().getType(), {getGate(), getUp()},
      computeType, [&](OpBuilder &b, Location loc, ValueRange args) {
        Value silu = buildSilu(b, loc, computeType, args[0]);
        return arith::MulFOp::create(b, loc, silu, args[1]).getResult();
      });
  return SmallVector<Value>{result};
}

/// A dimension name not in `type`: `base` followed by primes.
static std::string freshDimName(NamedTensorType type, StringRef base) {
  std::string name = base.str();
  do
    name += "'";
  while (type.hasDim(name));
  return name;
}

Decomposition RopeOp::decompose(OpBuilder &builder, FloatType computeType) {
  // y[.., r, f] = sum_s R(angle)[r, s] x[.., s, f] with the 2x2 rotation
  // R = [[cos, -sin], [sin, cos]] at angle = pos * theta^(-f / F): the input
  // viewed with its pair dimension renamed to `s` (a rename of the input: no
  // data moves), a map that broadcasts it along the output pair dimension
  // `r` and multiplies by R's entry (computed from the indices), and a sum
  // over `s`. The result has the input's dimensions in the input's layout.
  Location loc = getLoc();
  NamedTensorType inputType = getInput().getType();
  std::string inPair = freshDimName(inputType, getPair());
  SmallVector<std::pair<StringRef, int64_t>> viewDims, expandedDims;
  for (auto [name, size] :
       llvm::zip(inputType.getDimNames(), inputType.getSizes())) {
    bool isPair = name.getValue() == getPair();
    viewDims.push_back({isPair ? StringRef(inPair) : name.getValue(), size});
    expandedDims.push_back(viewDims.back());
    if (isPair)
      expandedDims.push_back({getPair(), 2});
  }
  Type element = inputType.getElementType();
  Value view = RenameOp::create(
      builder, loc, NamedTensorType::get(getContext(), viewDims, element),
      getInput());
  // The rotation's terms are summed in f32 (rounded once, by the sum).
  auto expandedType = NamedTensorType::get(getContext(), expandedDims,
                                           statisticsType(getContext()));
  double freqCount = static_cast<double>(inputType.getDimSize(getFreq()));
  double logTheta = std::log(getTheta().convertToDouble());
  Value terms = buildMap(
      builder, loc, expandedType, {view}, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        // args: x, then the indices of pair (output), inPair, position, freq.
        auto toFloat = [&](Value index) -> Value {
          Value integer =
              arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
          return arith::UIToFPOp::create(b, loc, computeType, integer);
        };
        // One statement per created op: the order of a call's arguments is
        // unspecified, and gcc and clang would emit the body differently.
        Value freqIndex = toFloat(args[4]);
        Value scale = buildConstant(b, loc, computeType, -logTheta / freqCount);
        Value exponent = arith::MulFOp::create(b, loc, freqIndex, scale);
        Value position = toFloat(args[3]);
        Value frequency = math::ExpOp::create(b, loc, exponent);
        Value angle = arith::MulFOp::create(b, loc, position, frequency);
        Value cos = math::CosOp::create(b, loc, angle);
        Value sin = math::SinOp::create(b, loc, angle);
        Value negSin = arith::NegFOp::create(b, loc, sin);
        Value diagonal = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, args[1], args[2]);
        // Output 0 from input 1 takes -sin; output 1 from input 0 takes sin.
        Value upper = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            args[1], args[2]);
        Value offDiagonal = arith::SelectOp::create(b, loc, upper, negSin, sin);
        Value entry =
            arith::SelectOp::create(b, loc, diagonal, cos, offDiagonal);
        return arith::MulFOp::create(b, loc, entry, args[0]).getResult();
      },
      {getPair(), inPair, getPosition(), getFreq()});
  Value rotated = buildReduce(builder, loc, ReduceKind::sum, terms,
                              {StringRef(inPair)}, element);
  return SmallVector<Value>{rotated};
}

Decomposition ReluOp::decompose(OpBuilder &builder, FloatType computeType) {
  Value result = buildMap(
      builder, getLoc(), getResult().getType(), {getInput()}, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value zero = buildConstant(b, loc, computeType, 0.0);
        return arith::MaximumFOp::create(b, loc, args[0], zero).getResult();
      });
  return SmallVector<Value>{result};
}

Decomposition GeluOp::decompose(OpBuilder &builder, FloatType computeType) {
  // 0.5 x (1 + erf(x / sqrt 2)), as torch.nn.GELU().
  Value result = buildMap(
      builder, getLoc(), getResult().getType(), {getInput()}, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value x = args[0];
        Value scaled = arith::MulFOp::create(
            b, loc, x, buildConstant(b, loc, computeType, M_SQRT1_2));
        Value erf = math::ErfOp::create(b, loc, scaled);
        Value onePlus = arith::AddFOp::create(
            b, loc, erf, buildConstant(b, loc, computeType, 1.0));
        Value half = arith::MulFOp::create(
            b, loc, x, buildConstant(b, loc, computeType, 0.5));
        return arith::MulFOp::create(b, loc, half, onePlus).getResult();
      });
  return SmallVector<Value>{result};
}

Decomposition GeluTanhOp::decompose(OpBuilder &builder, FloatType computeType) {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as
  // torch.nn.GELU(approximate="tanh").
  Value result = buildMap(
      builder, getLoc(), getResult().getType(), {getInput()}, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value x = args[0];
        Value x2 = arith::MulFOp::create(b, loc, x, x);
        Value x3 = arith::MulFOp::create(b, loc, x2, x);
        Value cubic = arith::MulFOp::create(
            b, loc, x3, buildConstant(b, loc, computeType, 0.044715));
        Value inner = arith::AddFOp::create(b, loc, x, cubic);
        Value scaled = arith::MulFOp::create(
            b, loc, inner,
            buildConstant(b, loc, computeType, std::sqrt(2.0 / M_PI)));
        Value tanh = math::TanhOp::create(b, loc, scaled);
        Value onePlus = arith::AddFOp::create(
            b, loc, tanh, buildConstant(b, loc, computeType, 1.0));
        Value half = arith::MulFOp::create(
            b, loc, x, buildConstant(b, loc, computeType, 0.5));
        return arith::MulFOp::create(b, loc, half, onePlus).getResult();
      });
  return SmallVector<Value>{result};
}

Decomposition DropoutOp::decompose(OpBuilder &builder, FloatType computeType) {
  Location loc = getLoc();
  double probability = getProbability().convertToDouble();
  Value mask = RandomMaskOp::create(builder, loc, getMask().getType(),
                                    getProbabilityAttr(), getStreamAttr());
  Value result =
      buildMap(builder, loc, getResult().getType(), {getInput(), mask},
               computeType, [&](OpBuilder &b, Location loc, ValueRange args) {
                 Value kept = arith::MulFOp::create(b, loc, args[0], args[1]);
                 Value keep =
                     buildConstant(b, loc, computeType, 1.0 - probability);
                 return arith::DivFOp::create(b, loc, kept, keep,
                                              arith::FastMathFlags::arcp)
                     .getResult();
               });
  return SmallVector<Value>{result, mask};
}

Decomposition CausalMaskOp::decompose(OpBuilder &builder,
                                      FloatType computeType) {
  Value result = buildMap(
      builder, getLoc(), getResult().getType(), {getInput()}, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        // args: the score, then the query and key positions.
        Value future = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                             args[2], args[1]);
        Value minusInf = buildConstant(
            b, loc, computeType, -std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(b, loc, future, minusInf, args[0])
            .getResult();
      },
      {getQuery(), getKey()});
  return SmallVector<Value>{result};
}

//===----------------------------------------------------------------------===//
// Replacing a composite
//===----------------------------------------------------------------------===//

FailureOr<DecomposedOp>
mlir::sluice::decomposeInPlace(CompositeOpInterface composite,
                               FloatType computeType) {
  IRRewriter rewriter(composite->getContext());
  return decomposeInPlace(rewriter, composite, computeType);
}

FailureOr<DecomposedOp>
mlir::sluice::decomposeInPlace(RewriterBase &rewriter,
                               CompositeOpInterface composite,
                               FloatType computeType) {
  Operation *op = composite.getOperation();
  // Every primitive remembers the composite it stands for.
  std::optional<OriginKind> kind = getOriginKindOfOp(op);
  if (!kind)
    return op->emitOpError("has no origin kind (a composite's mnemonic must "
                           "be a case of OriginKind in SluiceAttrs.td)");
  Operation *previous = op->getPrevNode();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FailureOr<SmallVector<Value>> replacements =
      composite.decompose(rewriter, computeType);
  if (failed(replacements))
    return failure();
  DecomposedOp decomposed;
  decomposed.results = std::move(*replacements);
  Block::iterator begin =
      previous ? std::next(previous->getIterator()) : op->getBlock()->begin();
  auto name = op->getAttrOfType<StringAttr>(SluiceDialect::getOpNameAttrName());
  if (!name)
    name = StringAttr::get(op->getContext(), op->getName().stripDialect());
  for (Operation &created : llvm::make_range(begin, op->getIterator())) {
    decomposed.ops.push_back(&created);
    if (!created.hasAttr(SluiceDialect::getOriginAttrName()))
      created.setAttr(SluiceDialect::getOriginAttrName(), name);
    if (!getOriginKind(&created))
      setOriginKind(&created, *kind);
  }
  rewriter.replaceOp(op, decomposed.results);
  return decomposed;
}

FloatType mlir::sluice::getComputeFloatType(MLIRContext *context,
                                            ComputeType computeType) {
  switch (computeType) {
  case ComputeType::f32:
    return Float32Type::get(context);
  case ComputeType::f64:
    return Float64Type::get(context);
  }
  llvm_unreachable("unknown compute type");
}
