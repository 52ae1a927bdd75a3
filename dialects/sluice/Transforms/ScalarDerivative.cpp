//===- ScalarDerivative.cpp - differentiating a map's scalar body ---------===//
//
// Forward-mode symbolic differentiation of a `sluice.map` body with respect
// to one of its float arguments. The body's primal ops are cloned first (the
// derivative of exp reads exp, that of divf reads the quotient, ...); a
// tangent is then propagated op by op. A null tangent means "identically
// zero", and multiplications by a constant one are skipped, so d(a + b)/da
// builds no op at all. Unused clones are left for the caller to erase.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/ScalarOps.h"
#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/Transforms/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::autodiff;

namespace {
/// Builds tangent arithmetic, folding zeros (null values) and ones.
class TangentBuilder {
public:
  TangentBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  Value constant(Type type, double value) {
    return buildConstant(builder, loc, llvm::cast<FloatType>(type), value);
  }
  Value zeroIfNull(Value tangent, Type type) {
    return tangent ? tangent : constant(type, 0.0);
  }
  static bool isOne(Value value) { return matchPattern(value, m_OneFloat()); }
  Value add(Value a, Value b) {
    if (!a)
      return b;
    if (!b)
      return a;
    return builder.createOrFold<arith::AddFOp>(loc, a, b);
  }
  Value neg(Value a) {
    if (!a)
      return {};
    return builder.createOrFold<arith::NegFOp>(loc, a);
  }
  Value sub(Value a, Value b) {
    if (!b)
      return a;
    if (!a)
      return neg(b);
    return builder.createOrFold<arith::SubFOp>(loc, a, b);
  }
  /// tangent * factor; null if the tangent is zero.
  Value mul(Value tangent, Value factor) {
    if (!tangent)
      return {};
    if (isOne(factor))
      return tangent;
    if (isOne(tangent))
      return factor;
    return builder.createOrFold<arith::MulFOp>(loc, tangent, factor);
  }
  /// tangent / divisor; `flags` are the primal division's (a divisor that
  /// allowed its reciprocal, fastmath<arcp>, still does).
  Value div(Value tangent, Value divisor,
            arith::FastMathFlags flags = arith::FastMathFlags::none) {
    if (!tangent)
      return {};
    return builder.createOrFold<arith::DivFOp>(loc, tangent, divisor, flags);
  }
  /// cond ? a : b over tangents; null if both are zero.
  Value select(Value cond, Value a, Value b, Type type) {
    if (!a && !b)
      return {};
    return arith::SelectOp::create(builder, loc, cond, zeroIfNull(a, type),
                                   zeroIfNull(b, type));
  }

  /// The error for an op the table gives no derivative rule.
  FailureOr<Value> noRule(Operation &op) {
    return op.emitOpError() << "cannot be differentiated: no derivative rule "
                                "(the supported ops are listed in "
                                "docs/Autodiff.md)";
  }
  /// d|a| = (a < 0 ? -da : da).
  Value absTangent(Value da, Value a, Type type) {
    Value negative = arith::CmpFOp::create(
        builder, loc, arith::CmpFPredicate::OLT, a, constant(type, 0.0));
    return arith::SelectOp::create(builder, loc, negative, neg(da), da);
  }
  /// d erf(a) = 2/sqrt(pi) exp(-a^2) da.
  Value erfTangent(Value da, Value a, Type type) {
    Value square = arith::MulFOp::create(builder, loc, a, a);
    Value gauss = math::ExpOp::create(
        builder, loc, arith::NegFOp::create(builder, loc, square));
    Value factor = arith::MulFOp::create(builder, loc, gauss,
                                         constant(type, 2.0 / std::sqrt(M_PI)));
    return mul(da, factor);
  }
  /// d tanh(a) = (1 - tanh(a)^2) da, from the result r = tanh(a).
  Value tanhTangent(Value da, Value r, Type type) {
    Value square = arith::MulFOp::create(builder, loc, r, r);
    Value factor =
        arith::SubFOp::create(builder, loc, constant(type, 1.0), square);
    return mul(da, factor);
  }
  /// d sqrt(a) = da / (2 sqrt(a)), from the result r = sqrt(a).
  Value sqrtTangent(Value da, Value r, Type type) {
    Value twice = arith::MulFOp::create(builder, loc, r, constant(type, 2.0));
    return div(da, twice);
  }
  /// d a^(-1/2) = -1/2 a^(-3/2) da = -1/2 r^3 da.
  Value rsqrtTangent(Value da, Value r, Type type) {
    Value cube = arith::MulFOp::create(
        builder, loc, arith::MulFOp::create(builder, loc, r, r), r);
    Value factor =
        arith::MulFOp::create(builder, loc, cube, constant(type, -0.5));
    return mul(da, factor);
  }

  OpBuilder &builder;
  Location loc;
};
} // namespace

/// The tangent of `op`'s float result, given the tangents (`tan`, null for
/// zero) and primal values (`p`) of the forward body's values and the primal
/// result `r`. Unary float functions take their rule from ScalarOps.def.
template <typename TangentFn, typename PrimalFn>
static FailureOr<Value> tangentOf(TangentBuilder &t, Operation &op,
                                  TangentFn tan, PrimalFn p, Value r) {
  OpBuilder &builder = t.builder;
  Location loc = t.loc;
  Type type = op.getResult(0).getType();
  auto operand = [&](unsigned i) { return op.getOperand(i); };
  using O = ScalarOpcode;
  switch (getScalarOpcode(&op)) {
#define SLUICE_FLOAT_UNARY(NAME, OP, PRINT, SPELLING, EVAL, DERIV)            \
  case O::NAME: {                                                              \
    Value da = tan(operand(0));                                                \
    Value a = p(operand(0));                                                   \
    (void)a;                                                                   \
    return FailureOr<Value>(DERIV);                                            \
  }
#include "dialects/sluice/ScalarOps.def"
  case O::AddF:
    return t.add(tan(operand(0)), tan(operand(1)));
  case O::SubF:
    return t.sub(tan(operand(0)), tan(operand(1)));
  case O::MulF:
    return t.add(t.mul(tan(operand(0)), p(operand(1))),
                 t.mul(tan(operand(1)), p(operand(0))));
  case O::DivF: {
    // d(a/b) = da/b - (a/b) db/b.
    Value b = p(operand(1));
    arith::FastMathFlags flags = llvm::cast<arith::DivFOp>(op).getFastmath();
    return t.sub(t.div(tan(operand(0)), b, flags),
                 t.div(t.mul(tan(operand(1)), r), b, flags));
  }
  case O::MaximumF:
  case O::MaxNumF:
  case O::MinimumF:
  case O::MinNumF: {
    // Ties take the lhs' derivative.
    bool isMax = llvm::isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
    Value cond = arith::CmpFOp::create(
        builder, loc,
        isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE,
        p(operand(0)), p(operand(1)));
    return t.select(cond, tan(operand(0)), tan(operand(1)), type);
  }
  case O::Select:
    // The condition has a zero derivative.
    return t.select(p(operand(0)), tan(operand(1)), tan(operand(2)), type);
  case O::ExtF:
    return Value(arith::ExtFOp::create(builder, loc, type, tan(operand(0))));
  case O::TruncF:
    return Value(arith::TruncFOp::create(builder, loc, type, tan(operand(0))));
  case O::PowF: {
    // Only a constant exponent c: d a^c = c a^(c-1) da.
    FloatAttr exponent;
    if (!matchPattern(operand(1), m_Constant(&exponent)))
      return op.emitOpError() << "cannot be differentiated: only a constant "
                                 "exponent is supported";
    double c = exponent.getValueAsDouble();
    Value lowered = math::PowFOp::create(builder, loc, p(operand(0)),
                                         t.constant(type, c - 1.0));
    Value factor =
        arith::MulFOp::create(builder, loc, lowered, t.constant(type, c));
    return t.mul(tan(operand(0)), factor);
  }
  case O::Constant:
    return Value();
  default:
    return t.noRule(op);
  }
}

FailureOr<Value>
mlir::sluice::autodiff::buildPartialDerivative(OpBuilder &builder, Location loc,
                                               Block &forwardBody, unsigned wrt,
                                               ValueRange args, Value output) {
  // Primal values: the forward body cloned onto `args`.
  IRMapping primal;
  primal.map(forwardBody.getArguments(), args);
  for (Operation &op : forwardBody.without_terminator())
    builder.clone(op, primal);
  Value yielded = llvm::cast<YieldOp>(forwardBody.getTerminator()).getValue();
  if (output)
    primal.map(yielded, output);

  TangentBuilder t(builder, loc);
  DenseMap<Value, Value> tangents;
  BlockArgument seed = forwardBody.getArgument(wrt);
  tangents[seed] = t.constant(seed.getType(), 1.0);
  auto tan = [&](Value forward) { return tangents.lookup(forward); };
  auto p = [&](Value forward) { return primal.lookupOrDefault(forward); };

  for (Operation &op : forwardBody.without_terminator()) {
    // Ops without float results (comparisons, index arithmetic) and ops no
    // tangent reaches have a zero derivative.
    if (op.getNumResults() != 1 ||
        !llvm::isa<FloatType>(op.getResult(0).getType()))
      continue;
    if (llvm::none_of(op.getOperands(), [&](Value v) { return tan(v); }))
      continue;
    Value result = op.getResult(0);
    Value r = p(result);
    FailureOr<Value> tangent = tangentOf(t, op, tan, p, r);
    if (failed(tangent))
      return failure();
    if (*tangent)
      tangents[result] = *tangent;
  }
  return tan(yielded);
}
