//===- ScalarBody.cpp - evaluating a sluice.map body ----------------------===//
//
// Every arith/math op a map body may hold, evaluated in double (floats) or
// int64 (integers, indices, i1) with the op's MLIR semantics. In f32 mode a
// float result is rounded to its type after every op, which for + - * / and
// sqrt gives exactly the float result; transcendental functions are
// evaluated in double and rounded once (at least as accurate as libm's float
// versions).
//
//===----------------------------------------------------------------------===//

#include "ScalarBody.h"

#include "sluice/Interpreter/FloatRounding.h"

#include "dialects/sluice/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace ::sluice;

/// The bit width of an integer-like type (index counts as 64).
static unsigned widthOf(Type type) {
  if (auto integer = llvm::dyn_cast<IntegerType>(type))
    return integer.getWidth();
  return 64;
}

/// `value` as a `width`-bit two's-complement integer, sign-extended (i1 is
/// kept as 0 or 1).
static int64_t canonical(int64_t value, unsigned width) {
  if (width == 1)
    return value & 1;
  if (width >= 64)
    return value;
  uint64_t shift = 64 - width;
  return static_cast<int64_t>(static_cast<uint64_t>(value) << shift) >> shift;
}

/// The signed reading of a canonical value (i1 true is -1).
static int64_t asSigned(int64_t value, unsigned width) {
  return width == 1 ? -(value & 1) : value;
}

/// The unsigned reading of a canonical value.
static uint64_t asUnsigned(int64_t value, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(value);
  return static_cast<uint64_t>(value) & ((uint64_t(1) << width) - 1);
}

static bool compareF(arith::CmpFPredicate predicate, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (predicate) {
  case P::AlwaysFalse: return false;
  case P::OEQ: return !unordered && a == b;
  case P::OGT: return !unordered && a > b;
  case P::OGE: return !unordered && a >= b;
  case P::OLT: return !unordered && a < b;
  case P::OLE: return !unordered && a <= b;
  case P::ONE: return !unordered && a != b;
  case P::ORD: return !unordered;
  case P::UEQ: return unordered || a == b;
  case P::UGT: return unordered || a > b;
  case P::UGE: return unordered || a >= b;
  case P::ULT: return unordered || a < b;
  case P::ULE: return unordered || a <= b;
  case P::UNE: return unordered || a != b;
  case P::UNO: return unordered;
  case P::AlwaysTrue: return true;
  }
  return false;
}

static bool compareI(arith::CmpIPredicate predicate, int64_t a, int64_t b,
                     unsigned width) {
  int64_t sa = asSigned(a, width), sb = asSigned(b, width);
  uint64_t ua = asUnsigned(a, width), ub = asUnsigned(b, width);
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::eq: return ua == ub;
  case P::ne: return ua != ub;
  case P::slt: return sa < sb;
  case P::sle: return sa <= sb;
  case P::sgt: return sa > sb;
  case P::sge: return sa >= sb;
  case P::ult: return ua < ub;
  case P::ule: return ua <= ub;
  case P::ugt: return ua > ub;
  case P::uge: return ua >= ub;
  }
  return false;
}

/// IEEE maximum/minimum (arith.maximumf/minimumf): NaN propagates, and
/// +0 is larger than -0.
static double ieeeMaximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
static double ieeeMinimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

llvm::Expected<ScalarBody>
ScalarBody::compile(mlir::sluice::MapOp map, Precision precision) {
  ScalarBody body;
  body.precision = precision;
  Block &block = map.getBody().front();
  body.numIndexArgs = map.getIndexDims().size();
  body.numFloatArgs = block.getNumArguments() - body.numIndexArgs;
  llvm::DenseMap<Value, unsigned> slotOf;
  for (BlockArgument arg : block.getArguments())
    slotOf[arg] = slotOf.size();
  for (unsigned i = 0; i < body.numFloatArgs; ++i)
    body.argTypes.push_back(block.getArgument(i).getType());

  for (Operation &op : block.without_terminator()) {
    ScalarOpcode opcode = getScalarOpcode(&op);
    if (opcode == ScalarOpcode::Unsupported || op.getNumResults() != 1 ||
        op.getNumOperands() > 3 || op.getNumRegions() != 0)
      return llvm::createStringError(
          "the interpreter cannot evaluate '" +
          op.getName().getStringRef().str() +
          "' in a sluice.map body (supported: arith and math scalar ops on "
          "floats, integers and index)");
    Instruction instruction{};
    instruction.opcode = opcode;
    instruction.type = op.getResult(0).getType();
    for (auto [index, operand] : llvm::enumerate(op.getOperands()))
      instruction.operands[index] = slotOf.at(operand);
    // A comparison of integers needs its operands' width, not its result's.
    if (opcode == ScalarOpcode::CmpI)
      instruction.type = op.getOperand(0).getType();
    if (auto cmp = llvm::dyn_cast<arith::CmpFOp>(op))
      instruction.immediate.i = static_cast<int64_t>(cmp.getPredicate());
    if (auto cmp = llvm::dyn_cast<arith::CmpIOp>(op))
      instruction.immediate.i = static_cast<int64_t>(cmp.getPredicate());
    if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
      Attribute value = constant.getValue();
      if (auto floatAttr = llvm::dyn_cast<FloatAttr>(value)) {
        instruction.immediate.f = floatAttr.getValueAsDouble();
      } else if (auto intAttr = llvm::dyn_cast<IntegerAttr>(value)) {
        instruction.immediate.i = canonical(
            intAttr.getValue().getSExtValue(), widthOf(instruction.type));
      } else {
        return llvm::createStringError(
            "the interpreter cannot evaluate a non-scalar arith.constant in a "
            "sluice.map body");
      }
    }
    // Integer-producing ops that read a different width than they produce.
    using O = ScalarOpcode;
    if (opcode == O::ExtSI || opcode == O::ExtUI || opcode == O::IndexCast ||
        opcode == O::IndexCastUI || opcode == O::TruncI ||
        opcode == O::SIToFP || opcode == O::UIToFP)
      instruction.immediate.i = widthOf(op.getOperand(0).getType());
    instruction.result = slotOf.size();
    slotOf[op.getResult(0)] = instruction.result;
    body.instructions.push_back(instruction);
  }
  body.yielded = slotOf.at(map.getYield().getValue());
  body.slots.resize(slotOf.size());
  return body;
}

double ScalarBody::evaluate(llvm::ArrayRef<double> floats,
                            llvm::ArrayRef<int64_t> indices) {
  for (unsigned i = 0; i < numFloatArgs; ++i)
    slots[i].f = precision == Precision::F32
                     ? roundToType(floats[i], argTypes[i])
                     : floats[i];
  for (unsigned i = 0; i < numIndexArgs; ++i)
    slots[numFloatArgs + i].i = indices[i];

  for (const Instruction &in : instructions) {
    const Scalar &a = slots[in.operands[0]];
    const Scalar &b = slots[in.operands[1]];
    const Scalar &c = slots[in.operands[2]];
    Scalar &out = slots[in.result];
    unsigned width = widthOf(in.type);
    unsigned fromWidth = static_cast<unsigned>(in.immediate.i);
    bool isFloat = false;
    using O = ScalarOpcode;
    switch (in.opcode) {
    case ScalarOpcode::Unsupported: break;
    // Floats: compute in double, then round below.
#define SLUICE_FLOAT_UNARY(NAME, OP, PRINT, SPELLING, EVAL, DERIV)            \
  case ScalarOpcode::NAME: {                                                   \
    double x = a.f;                                                            \
    out.f = EVAL;                                                              \
    isFloat = true;                                                            \
    break;                                                                     \
  }
#define SLUICE_FLOAT_BINARY(NAME, OP, PRINT, SPELLING, EVAL)                  \
  case ScalarOpcode::NAME: {                                                   \
    double x = a.f, y = b.f;                                                   \
    out.f = EVAL;                                                              \
    isFloat = true;                                                            \
    break;                                                                     \
  }
#include "dialects/sluice/ScalarOps.def"
    case O::Fma: out.f = std::fma(a.f, b.f, c.f); isFloat = true; break;
    case O::ExtF: case O::TruncF: out.f = a.f; isFloat = true; break;
    case O::SIToFP:
      out.f = static_cast<double>(asSigned(a.i, fromWidth));
      isFloat = true;
      break;
    case O::UIToFP:
      out.f = static_cast<double>(asUnsigned(a.i, fromWidth));
      isFloat = true;
      break;
    case O::Constant:
      // A float constant carries its value in .f, an integer one in .i.
      isFloat = llvm::isa<FloatType>(in.type);
      out = in.immediate;
      break;
    // Comparisons produce i1.
    case O::CmpF:
      out.i = compareF(static_cast<arith::CmpFPredicate>(in.immediate.i),
                       a.f, b.f);
      break;
    case O::CmpI:
      out.i = compareI(static_cast<arith::CmpIPredicate>(in.immediate.i),
                       a.i, b.i, width);
      break;
    case O::Select: out = (a.i & 1) ? b : c; break;
    case O::IsNaN: out.i = std::isnan(a.f); break;
    case O::IsInf: out.i = std::isinf(a.f); break;
    case O::IsFinite: out.i = std::isfinite(a.f); break;
    // Integers: compute in 64 bits, then wrap to the width.
    case O::AddI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.i) +
                                             static_cast<uint64_t>(b.i)),
                        width);
      break;
    case O::SubI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.i) -
                                             static_cast<uint64_t>(b.i)),
                        width);
      break;
    case O::MulI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.i) *
                                             static_cast<uint64_t>(b.i)),
                        width);
      break;
    case O::DivSI: out.i = canonical(b.i ? a.i / b.i : 0, width); break;
    case O::RemSI: out.i = canonical(b.i ? a.i % b.i : 0, width); break;
    case O::DivUI: {
      uint64_t d = asUnsigned(b.i, width);
      out.i = canonical(d ? asUnsigned(a.i, width) / d : 0, width);
      break;
    }
    case O::RemUI: {
      uint64_t d = asUnsigned(b.i, width);
      out.i = canonical(d ? asUnsigned(a.i, width) % d : 0, width);
      break;
    }
    case O::MaxSI:
      out.i = asSigned(a.i, width) >= asSigned(b.i, width) ? a.i : b.i;
      break;
    case O::MinSI:
      out.i = asSigned(a.i, width) <= asSigned(b.i, width) ? a.i : b.i;
      break;
    case O::MaxUI:
      out.i = asUnsigned(a.i, width) >= asUnsigned(b.i, width) ? a.i : b.i;
      break;
    case O::MinUI:
      out.i = asUnsigned(a.i, width) <= asUnsigned(b.i, width) ? a.i : b.i;
      break;
    case O::AndI: out.i = canonical(a.i & b.i, width); break;
    case O::OrI: out.i = canonical(a.i | b.i, width); break;
    case O::XOrI: out.i = canonical(a.i ^ b.i, width); break;
    case O::IndexCast: case O::ExtSI: case O::TruncI:
      out.i = canonical(asSigned(a.i, fromWidth), width);
      break;
    case O::IndexCastUI: case O::ExtUI:
      out.i = canonical(static_cast<int64_t>(asUnsigned(a.i, fromWidth)),
                        width);
      break;
    case O::FPToSI:
      out.i = canonical(static_cast<int64_t>(a.f), width);
      break;
    case O::FPToUI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.f)),
                        width);
      break;
    }
    if (isFloat && precision == Precision::F32)
      out.f = roundToType(out.f, in.type);
  }
  return slots[yielded].f;
}
