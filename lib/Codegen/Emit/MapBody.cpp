//===- MapBody.cpp - a sluice.map body as C statements --------------------===//
//
// Every arith/math op the interpreter evaluates, printed as one C statement
// with the interpreter's semantics: IEEE maximum/minimum through helpers,
// ordered/unordered comparisons spelled so NaN behaves, constants as hex
// floats (exact). f32 bodies use the float functions (expf, ...), f64 the
// double ones; on the C++ target f32 exp, erf and tanh are
// sluice_kernels.h's sluice_expf / sluice_erff / sluice_tanhf. The text compiles as host C++ and CUDA device
// code.
//
//===----------------------------------------------------------------------===//

#include "EmitInternal.h"

#include "dialects/sluice/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// The C type of a scalar body value.
std::string cType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  if (type.isInteger(1))
    return "bool";
  if (type.isIntOrIndex())
    return "int64_t";
  return "";
}

/// An exact C literal for `value` in `type` (f32 gets the f suffix).
std::string floatLiteral(double value, bool isFloat) {
  if (std::isnan(value))
    return isFloat ? "NAN" : "(double)NAN";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") +
           (isFloat ? "INFINITY" : "(double)INFINITY");
  char buffer[64];
  if (isFloat)
    std::snprintf(buffer, sizeof(buffer), "%af", static_cast<float>(value));
  else
    std::snprintf(buffer, sizeof(buffer), "%a", value);
  return buffer;
}

std::string cmpF(arith::CmpFPredicate predicate, const std::string &a,
                 const std::string &b) {
  using P = arith::CmpFPredicate;
  switch (predicate) {
  case P::AlwaysFalse:
    return "false";
  case P::OEQ:
    return "(" + a + " == " + b + ")";
  case P::OGT:
    return "(" + a + " > " + b + ")";
  case P::OGE:
    return "(" + a + " >= " + b + ")";
  case P::OLT:
    return "(" + a + " < " + b + ")";
  case P::OLE:
    return "(" + a + " <= " + b + ")";
  case P::ONE:
    return "(" + a + " < " + b + " || " + a + " > " + b + ")";
  case P::ORD:
    return "(" + a + " == " + a + " && " + b + " == " + b + ")";
  case P::UEQ:
    return "!(" + a + " < " + b + " || " + a + " > " + b + ")";
  case P::UGT:
    return "!(" + a + " <= " + b + ")";
  case P::UGE:
    return "!(" + a + " < " + b + ")";
  case P::ULT:
    return "!(" + a + " >= " + b + ")";
  case P::ULE:
    return "!(" + a + " > " + b + ")";
  case P::UNE:
    return "(" + a + " != " + b + ")";
  case P::UNO:
    return "(" + a + " != " + a + " || " + b + " != " + b + ")";
  case P::AlwaysTrue:
    return "true";
  }
  return "false";
}

std::string cmpI(arith::CmpIPredicate predicate, const std::string &a,
                 const std::string &b) {
  using P = arith::CmpIPredicate;
  std::string ua = "(uint64_t)" + a, ub = "(uint64_t)" + b;
  switch (predicate) {
  case P::eq:
    return "(" + a + " == " + b + ")";
  case P::ne:
    return "(" + a + " != " + b + ")";
  case P::slt:
    return "(" + a + " < " + b + ")";
  case P::sle:
    return "(" + a + " <= " + b + ")";
  case P::sgt:
    return "(" + a + " > " + b + ")";
  case P::sge:
    return "(" + a + " >= " + b + ")";
  case P::ult:
    return "(" + ua + " < " + ub + ")";
  case P::ule:
    return "(" + ua + " <= " + ub + ")";
  case P::ugt:
    return "(" + ua + " > " + ub + ")";
  case P::uge:
    return "(" + ua + " >= " + ub + ")";
  }
  return "false";
}

/// True for a division the IR lets code generation compute as a multiply by
/// the correctly rounded reciprocal (fastmath<arcp>): `sluice_mul_rcp` in
/// sluice_kernels.h, the same two roundings on both targets.
bool allowsReciprocal(Operation &op) {
  auto div = llvm::dyn_cast<arith::DivFOp>(op);
  return div &&
         arith::bitEnumContainsAll(div.getFastmath(), arith::FastMathFlags::arcp);
}

/// The ops ScalarOps.def marks Custom: comparisons, select, constants, the
/// float classifications and the integer operations that need a guard.
std::string customExpression(Operation &op, ScalarOpcode opcode,
                             ArrayRef<std::string> in, bool isFloat) {
  using O = ScalarOpcode;
  switch (opcode) {
  case O::Constant: {
    Attribute value = llvm::cast<arith::ConstantOp>(op).getValue();
    if (auto f = llvm::dyn_cast<FloatAttr>(value))
      return floatLiteral(f.getValueAsDouble(), isFloat);
    if (auto i = llvm::dyn_cast<IntegerAttr>(value))
      return i.getType().isInteger(1)
                 ? (i.getValue().isZero() ? "false" : "true")
                 : "(int64_t)" + std::to_string(i.getValue().getSExtValue()) +
                       "LL";
    return "";
  }
  case O::CmpF:
    return cmpF(llvm::cast<arith::CmpFOp>(op).getPredicate(), in[0], in[1]);
  case O::CmpI:
    return cmpI(llvm::cast<arith::CmpIOp>(op).getPredicate(), in[0], in[1]);
  case O::Select:
    return in[0] + " ? " + in[1] + " : " + in[2];
  case O::IsNaN:
    return "(" + in[0] + " != " + in[0] + ")";
  case O::IsInf:
    return "isinf(" + in[0] + ")";
  case O::IsFinite:
    return "isfinite(" + in[0] + ")";
  case O::DivSI:
    return in[1] + " ? " + in[0] + " / " + in[1] + " : 0";
  case O::RemSI:
    return in[1] + " ? " + in[0] + " % " + in[1] + " : 0";
  case O::MaxSI:
    return in[0] + " >= " + in[1] + " ? " + in[0] + " : " + in[1];
  case O::MinSI:
    return in[0] + " <= " + in[1] + " ? " + in[0] + " : " + in[1];
  default:
    return "";
  }
}
} // namespace

FailureOr<std::string>
mlir::sluice::emit::emitMapBody(MapOp map, ArrayRef<std::string> arguments,
                                ArrayRef<std::string> indices, StringRef prefix,
                                llvm::raw_ostream &os, StringRef indent,
                                EmitTarget target) {
  Block &block = map.getBody().front();
  llvm::DenseMap<Value, std::string> names;
  unsigned numFloats = block.getNumArguments() - indices.size();
  for (unsigned i = 0; i < block.getNumArguments(); ++i) {
    BlockArgument arg = block.getArgument(i);
    std::string type = cType(arg.getType());
    if (type.empty())
      return map.emitOpError()
             << "has a body argument of type " << arg.getType()
             << " that code generation cannot hold (f32, f64, integers)";
    std::string name = (prefix + "_a" + Twine(i)).str();
    std::string init = i < numFloats
                           ? "(" + type + ")(" + arguments[i] + ")"
                           : "(" + type + ")(" + indices[i - numFloats] + ")";
    os << indent << "const " << type << " " << name << " = " << init << ";\n";
    names[arg] = name;
  }
  unsigned counter = 0;
  for (Operation &op : block.without_terminator()) {
    if (op.getNumResults() != 1)
      return op.emitOpError() << "cannot be emitted in a map body";
    Type type = op.getResult(0).getType();
    std::string resultType = cType(type);
    bool isFloat = type.isF32();
    SmallVector<std::string> in;
    for (Value operand : op.getOperands())
      in.push_back(names.lookup(operand));
    std::string expr;
    ScalarOpcode opcode = getScalarOpcode(&op);
    std::string spelling = getScalarSpelling(opcode).str();
    switch (getScalarPrint(opcode)) {
    case ScalarPrint::Infix:
      expr = allowsReciprocal(op)
                 ? "sluice_mul_rcp(" + in[0] + ", " + in[1] + ")"
                 : in[0] + " " + spelling + " " + in[1];
      break;
    case ScalarPrint::Prefix:
      expr = spelling + in[0];
      break;
    case ScalarPrint::Math:
    case ScalarPrint::Helper:
      expr = spelling + (isFloat ? "f" : "") + "(" + llvm::join(in, ", ") + ")";
      // The CPU's vectorizable exp, erf and tanh (sluice_kernels.h).
      if (isFloat && target == EmitTarget::Cpu &&
          (spelling == "exp" || spelling == "erf" || spelling == "tanh"))
        expr = "sluice_" + expr;
      break;
    case ScalarPrint::Cast:
      expr = "(" + resultType + ")" + in[0];
      break;
    case ScalarPrint::UCast:
      expr = "(" + resultType + ")(uint64_t)" + in[0];
      break;
    case ScalarPrint::Custom:
      expr = customExpression(op, opcode, in, isFloat);
      break;
    case ScalarPrint::None:
      break;
    }
    if (expr.empty() || resultType.empty())
      return op.emitOpError()
             << "has no C translation in a map body (code generation "
                "supports the arith/math scalar ops the interpreter "
                "evaluates, on f32/f64, integers and index)";
    std::string name = (prefix + "_" + Twine(counter++)).str();
    os << indent << "const " << resultType << " " << name << " = " << expr
       << ";\n";
    names[op.getResult(0)] = name;
  }
  std::string yielded = names.lookup(map.getYield().getValue());
  return "(float)" + yielded;
}
