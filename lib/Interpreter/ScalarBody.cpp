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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace ::sluice;

namespace {
enum Opcode : unsigned {
  Unsupported,
  // Floats.
  AddF, SubF, MulF, DivF, RemF, NegF, MaximumF, MinimumF, MaxNumF, MinNumF,
  CopySign, Fma, AbsF, Exp, Exp2, ExpM1, Log, Log2, Log10, Log1p, Erf, Erfc,
  Tanh, Sinh, Cosh, Sin, Cos, Tan, Atan, Atan2, Sqrt, Rsqrt, PowF, Floor,
  Ceil, Round, RoundEven, Trunc, ExtF, TruncF, SIToFP, UIToFP, ConstantF,
  // Comparisons and selection.
  CmpF, CmpI, Select, IsNaN, IsInf, IsFinite,
  // Integers and indices.
  ConstantI, AddI, SubI, MulI, DivSI, DivUI, RemSI, RemUI, MaxSI, MinSI,
  MaxUI, MinUI, AndI, OrI, XOrI, IndexCast, IndexCastUI, ExtSI, ExtUI,
  TruncI, FPToSI, FPToUI,
};
} // namespace

static Opcode opcodeFor(StringRef name) {
  return llvm::StringSwitch<Opcode>(name)
      .Case("arith.addf", AddF).Case("arith.subf", SubF)
      .Case("arith.mulf", MulF).Case("arith.divf", DivF)
      .Case("arith.remf", RemF).Case("arith.negf", NegF)
      .Case("arith.maximumf", MaximumF).Case("arith.minimumf", MinimumF)
      .Case("arith.maxnumf", MaxNumF).Case("arith.minnumf", MinNumF)
      .Case("math.copysign", CopySign).Case("math.fma", Fma)
      .Case("math.absf", AbsF).Case("math.exp", Exp).Case("math.exp2", Exp2)
      .Case("math.expm1", ExpM1).Case("math.log", Log)
      .Case("math.log2", Log2).Case("math.log10", Log10)
      .Case("math.log1p", Log1p).Case("math.erf", Erf)
      .Case("math.erfc", Erfc).Case("math.tanh", Tanh)
      .Case("math.sinh", Sinh).Case("math.cosh", Cosh).Case("math.sin", Sin)
      .Case("math.cos", Cos).Case("math.tan", Tan).Case("math.atan", Atan)
      .Case("math.atan2", Atan2).Case("math.sqrt", Sqrt)
      .Case("math.rsqrt", Rsqrt).Case("math.powf", PowF)
      .Case("math.floor", Floor).Case("math.ceil", Ceil)
      .Case("math.round", Round).Case("math.roundeven", RoundEven)
      .Case("math.trunc", Trunc).Case("arith.extf", ExtF)
      .Case("arith.truncf", TruncF).Case("arith.sitofp", SIToFP)
      .Case("arith.uitofp", UIToFP).Case("arith.cmpf", CmpF)
      .Case("arith.cmpi", CmpI).Case("arith.select", Select)
      .Case("arith.constant", ConstantF)
      .Case("math.isnan", IsNaN).Case("math.isinf", IsInf)
      .Case("math.isfinite", IsFinite).Case("arith.addi", AddI)
      .Case("arith.subi", SubI).Case("arith.muli", MulI)
      .Case("arith.divsi", DivSI).Case("arith.divui", DivUI)
      .Case("arith.remsi", RemSI).Case("arith.remui", RemUI)
      .Case("arith.maxsi", MaxSI).Case("arith.minsi", MinSI)
      .Case("arith.maxui", MaxUI).Case("arith.minui", MinUI)
      .Case("arith.andi", AndI).Case("arith.ori", OrI)
      .Case("arith.xori", XOrI).Case("arith.index_cast", IndexCast)
      .Case("arith.index_castui", IndexCastUI).Case("arith.extsi", ExtSI)
      .Case("arith.extui", ExtUI).Case("arith.trunci", TruncI)
      .Case("arith.fptosi", FPToSI).Case("arith.fptoui", FPToUI)
      .Default(Unsupported);
}

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
static double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
static double minimum(double a, double b) {
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
    Opcode opcode = opcodeFor(op.getName().getStringRef());
    if (opcode == Unsupported || op.getNumResults() != 1 ||
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
    if (opcode == CmpI)
      instruction.type = op.getOperand(0).getType();
    if (auto cmp = llvm::dyn_cast<arith::CmpFOp>(op))
      instruction.immediate.i = static_cast<int64_t>(cmp.getPredicate());
    if (auto cmp = llvm::dyn_cast<arith::CmpIOp>(op))
      instruction.immediate.i = static_cast<int64_t>(cmp.getPredicate());
    if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
      Attribute value = constant.getValue();
      if (auto floatAttr = llvm::dyn_cast<FloatAttr>(value)) {
        instruction.opcode = ConstantF;
        instruction.immediate.f = floatAttr.getValueAsDouble();
      } else if (auto intAttr = llvm::dyn_cast<IntegerAttr>(value)) {
        instruction.opcode = ConstantI;
        instruction.immediate.i = canonical(
            intAttr.getValue().getSExtValue(), widthOf(instruction.type));
      } else {
        return llvm::createStringError(
            "the interpreter cannot evaluate a non-scalar arith.constant in a "
            "sluice.map body");
      }
    }
    // Integer-producing ops that read a different width than they produce.
    if (opcode == ExtSI || opcode == ExtUI || opcode == IndexCast ||
        opcode == IndexCastUI || opcode == TruncI || opcode == SIToFP ||
        opcode == UIToFP)
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
    switch (static_cast<Opcode>(in.opcode)) {
    case Unsupported: break;
    // Floats: compute, then round below.
    case AddF: out.f = a.f + b.f; isFloat = true; break;
    case SubF: out.f = a.f - b.f; isFloat = true; break;
    case MulF: out.f = a.f * b.f; isFloat = true; break;
    case DivF: out.f = a.f / b.f; isFloat = true; break;
    case RemF: out.f = std::fmod(a.f, b.f); isFloat = true; break;
    case NegF: out.f = -a.f; isFloat = true; break;
    case MaximumF: out.f = maximum(a.f, b.f); isFloat = true; break;
    case MinimumF: out.f = minimum(a.f, b.f); isFloat = true; break;
    case MaxNumF: out.f = std::fmax(a.f, b.f); isFloat = true; break;
    case MinNumF: out.f = std::fmin(a.f, b.f); isFloat = true; break;
    case CopySign: out.f = std::copysign(a.f, b.f); isFloat = true; break;
    case Fma: out.f = std::fma(a.f, b.f, c.f); isFloat = true; break;
    case AbsF: out.f = std::fabs(a.f); isFloat = true; break;
    case Exp: out.f = std::exp(a.f); isFloat = true; break;
    case Exp2: out.f = std::exp2(a.f); isFloat = true; break;
    case ExpM1: out.f = std::expm1(a.f); isFloat = true; break;
    case Log: out.f = std::log(a.f); isFloat = true; break;
    case Log2: out.f = std::log2(a.f); isFloat = true; break;
    case Log10: out.f = std::log10(a.f); isFloat = true; break;
    case Log1p: out.f = std::log1p(a.f); isFloat = true; break;
    case Erf: out.f = std::erf(a.f); isFloat = true; break;
    case Erfc: out.f = std::erfc(a.f); isFloat = true; break;
    case Tanh: out.f = std::tanh(a.f); isFloat = true; break;
    case Sinh: out.f = std::sinh(a.f); isFloat = true; break;
    case Cosh: out.f = std::cosh(a.f); isFloat = true; break;
    case Sin: out.f = std::sin(a.f); isFloat = true; break;
    case Cos: out.f = std::cos(a.f); isFloat = true; break;
    case Tan: out.f = std::tan(a.f); isFloat = true; break;
    case Atan: out.f = std::atan(a.f); isFloat = true; break;
    case Atan2: out.f = std::atan2(a.f, b.f); isFloat = true; break;
    case Sqrt: out.f = std::sqrt(a.f); isFloat = true; break;
    case Rsqrt: out.f = 1.0 / std::sqrt(a.f); isFloat = true; break;
    case PowF: out.f = std::pow(a.f, b.f); isFloat = true; break;
    case Floor: out.f = std::floor(a.f); isFloat = true; break;
    case Ceil: out.f = std::ceil(a.f); isFloat = true; break;
    case Round: out.f = std::round(a.f); isFloat = true; break;
    case RoundEven: out.f = std::nearbyint(a.f); isFloat = true; break;
    case Trunc: out.f = std::trunc(a.f); isFloat = true; break;
    case ExtF: case TruncF: out.f = a.f; isFloat = true; break;
    case SIToFP:
      out.f = static_cast<double>(asSigned(a.i, fromWidth));
      isFloat = true;
      break;
    case UIToFP:
      out.f = static_cast<double>(asUnsigned(a.i, fromWidth));
      isFloat = true;
      break;
    case ConstantF: out.f = in.immediate.f; isFloat = true; break;
    // Comparisons produce i1.
    case CmpF:
      out.i = compareF(static_cast<arith::CmpFPredicate>(in.immediate.i),
                       a.f, b.f);
      break;
    case CmpI:
      out.i = compareI(static_cast<arith::CmpIPredicate>(in.immediate.i),
                       a.i, b.i, width);
      break;
    case Select: out = (a.i & 1) ? b : c; break;
    case IsNaN: out.i = std::isnan(a.f); break;
    case IsInf: out.i = std::isinf(a.f); break;
    case IsFinite: out.i = std::isfinite(a.f); break;
    // Integers: compute in 64 bits, then wrap to the width.
    case ConstantI: out.i = in.immediate.i; break;
    case AddI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.i) +
                                             static_cast<uint64_t>(b.i)),
                        width);
      break;
    case SubI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.i) -
                                             static_cast<uint64_t>(b.i)),
                        width);
      break;
    case MulI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.i) *
                                             static_cast<uint64_t>(b.i)),
                        width);
      break;
    case DivSI: out.i = canonical(b.i ? a.i / b.i : 0, width); break;
    case RemSI: out.i = canonical(b.i ? a.i % b.i : 0, width); break;
    case DivUI: {
      uint64_t d = asUnsigned(b.i, width);
      out.i = canonical(d ? asUnsigned(a.i, width) / d : 0, width);
      break;
    }
    case RemUI: {
      uint64_t d = asUnsigned(b.i, width);
      out.i = canonical(d ? asUnsigned(a.i, width) % d : 0, width);
      break;
    }
    case MaxSI:
      out.i = asSigned(a.i, width) >= asSigned(b.i, width) ? a.i : b.i;
      break;
    case MinSI:
      out.i = asSigned(a.i, width) <= asSigned(b.i, width) ? a.i : b.i;
      break;
    case MaxUI:
      out.i = asUnsigned(a.i, width) >= asUnsigned(b.i, width) ? a.i : b.i;
      break;
    case MinUI:
      out.i = asUnsigned(a.i, width) <= asUnsigned(b.i, width) ? a.i : b.i;
      break;
    case AndI: out.i = canonical(a.i & b.i, width); break;
    case OrI: out.i = canonical(a.i | b.i, width); break;
    case XOrI: out.i = canonical(a.i ^ b.i, width); break;
    case IndexCast: case ExtSI: case TruncI:
      out.i = canonical(asSigned(a.i, fromWidth), width);
      break;
    case IndexCastUI: case ExtUI:
      out.i = canonical(static_cast<int64_t>(asUnsigned(a.i, fromWidth)),
                        width);
      break;
    case FPToSI:
      out.i = canonical(static_cast<int64_t>(a.f), width);
      break;
    case FPToUI:
      out.i = canonical(static_cast<int64_t>(static_cast<uint64_t>(a.f)),
                        width);
      break;
    }
    if (isFloat && precision == Precision::F32)
      out.f = roundToType(out.f, in.type);
  }
  return slots[yielded].f;
}
