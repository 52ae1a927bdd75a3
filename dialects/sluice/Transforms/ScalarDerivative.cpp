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

#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/Transforms/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

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
  Value div(Value tangent, Value divisor) {
    if (!tangent)
      return {};
    return builder.createOrFold<arith::DivFOp>(loc, tangent, divisor);
  }
  /// cond ? a : b over tangents; null if both are zero.
  Value select(Value cond, Value a, Value b, Type type) {
    if (!a && !b)
      return {};
    return arith::SelectOp::create(builder, loc, cond, zeroIfNull(a, type),
                                   zeroIfNull(b, type));
  }

  OpBuilder &builder;
  Location loc;
};
} // namespace

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
    Type type = result.getType();
    Value r = p(result);
    FailureOr<Value> tangent =
        llvm::TypeSwitch<Operation *, FailureOr<Value>>(&op)
            .Case([&](arith::AddFOp add) {
              return t.add(tan(add.getLhs()), tan(add.getRhs()));
            })
            .Case([&](arith::SubFOp sub) {
              return t.sub(tan(sub.getLhs()), tan(sub.getRhs()));
            })
            .Case([&](arith::MulFOp mul) {
              return t.add(t.mul(tan(mul.getLhs()), p(mul.getRhs())),
                           t.mul(tan(mul.getRhs()), p(mul.getLhs())));
            })
            .Case([&](arith::DivFOp div) {
              // d(a/b) = da/b - (a/b) db/b.
              Value b = p(div.getRhs());
              return t.sub(t.div(tan(div.getLhs()), b),
                           t.div(t.mul(tan(div.getRhs()), r), b));
            })
            .Case(
                [&](arith::NegFOp neg) { return t.neg(tan(neg.getOperand())); })
            .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *max) {
              // Ties take the lhs' derivative.
              Value cond = arith::CmpFOp::create(
                  builder, loc, arith::CmpFPredicate::OGE,
                  p(max->getOperand(0)), p(max->getOperand(1)));
              return t.select(cond, tan(max->getOperand(0)),
                              tan(max->getOperand(1)), type);
            })
            .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *min) {
              Value cond = arith::CmpFOp::create(
                  builder, loc, arith::CmpFPredicate::OLE,
                  p(min->getOperand(0)), p(min->getOperand(1)));
              return t.select(cond, tan(min->getOperand(0)),
                              tan(min->getOperand(1)), type);
            })
            .Case([&](arith::SelectOp select) {
              // The condition has a zero derivative.
              return t.select(p(select.getCondition()),
                              tan(select.getTrueValue()),
                              tan(select.getFalseValue()), type);
            })
            .Case([&](arith::ExtFOp ext) -> Value {
              return arith::ExtFOp::create(builder, loc, type,
                                           tan(ext.getIn()));
            })
            .Case([&](arith::TruncFOp trunc) -> Value {
              return arith::TruncFOp::create(builder, loc, type,
                                             tan(trunc.getIn()));
            })
            .Case([&](math::ExpOp) { return t.mul(tan(op.getOperand(0)), r); })
            .Case([&](math::LogOp log) {
              return t.div(tan(log.getOperand()), p(log.getOperand()));
            })
            .Case([&](math::ErfOp erf) {
              // d erf(a) = 2/sqrt(pi) exp(-a^2) da.
              Value a = p(erf.getOperand());
              Value square = arith::MulFOp::create(builder, loc, a, a);
              Value gauss = math::ExpOp::create(
                  builder, loc, arith::NegFOp::create(builder, loc, square));
              Value factor = arith::MulFOp::create(
                  builder, loc, gauss, t.constant(type, 2.0 / std::sqrt(M_PI)));
              return t.mul(tan(erf.getOperand()), factor);
            })
            .Case([&](math::TanhOp tanh) {
              // d tanh(a) = (1 - tanh(a)^2) da.
              Value square = arith::MulFOp::create(builder, loc, r, r);
              Value factor = arith::SubFOp::create(
                  builder, loc, t.constant(type, 1.0), square);
              return t.mul(tan(tanh.getOperand()), factor);
            })
            .Case([&](math::SqrtOp sqrt) {
              // d sqrt(a) = da / (2 sqrt(a)).
              Value twice =
                  arith::MulFOp::create(builder, loc, r, t.constant(type, 2.0));
              return t.div(tan(sqrt.getOperand()), twice);
            })
            .Case([&](math::RsqrtOp rsqrt) {
              // d a^(-1/2) = -1/2 a^(-3/2) da = -1/2 r^3 da.
              Value cube = arith::MulFOp::create(
                  builder, loc, arith::MulFOp::create(builder, loc, r, r), r);
              Value factor = arith::MulFOp::create(builder, loc, cube,
                                                   t.constant(type, -0.5));
              return t.mul(tan(rsqrt.getOperand()), factor);
            })
            .Case([&](math::AbsFOp abs) -> Value {
              Value a = p(abs.getOperand());
              Value negative =
                  arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OLT,
                                        a, t.constant(type, 0.0));
              Value da = tan(abs.getOperand());
              return arith::SelectOp::create(builder, loc, negative, t.neg(da),
                                             da);
            })
            .Case([&](math::PowFOp pow) -> FailureOr<Value> {
              // Only a constant exponent c: d a^c = c a^(c-1) da.
              FloatAttr exponent;
              if (!matchPattern(pow.getRhs(), m_Constant(&exponent)))
                return pow.emitOpError()
                       << "cannot be differentiated: only a constant "
                          "exponent is supported";
              double c = exponent.getValueAsDouble();
              Value lowered = math::PowFOp::create(
                  builder, loc, p(pow.getLhs()), t.constant(type, c - 1.0));
              Value factor = arith::MulFOp::create(builder, loc, lowered,
                                                   t.constant(type, c));
              return t.mul(tan(pow.getLhs()), factor);
            })
            .Case([&](arith::ConstantOp) { return Value(); })
            .Default([&](Operation *other) -> FailureOr<Value> {
              return other->emitOpError()
                     << "cannot be differentiated: no derivative rule (the "
                        "supported ops are listed in docs/Autodiff.md)";
            });
    if (failed(tangent))
      return failure();
    if (*tangent)
      tangents[result] = *tangent;
  }
  return tan(yielded);
}
