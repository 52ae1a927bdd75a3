//===- MapBody.cpp - a sluice.map body as C statements --------------------===//
//
// Every arith/math op the interpreter evaluates, printed as one C statement
// with the interpreter's semantics: IEEE maximum/minimum through helpers,
// ordered/unordered comparisons spelled so NaN behaves, constants as hex
// floats (exact). f32 bodies use the float functions (expf, ...), f64 the
// double ones. The same text compiles as host C++ and CUDA device code.
//
//===----------------------------------------------------------------------===//

#include "EmitInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"

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

/// The C function for a unary/binary math op, float or double flavour.
std::string mathFunction(StringRef opName, bool isFloat) {
  StringRef base = llvm::StringSwitch<StringRef>(opName)
                       .Case("math.absf", "fabs")
                       .Case("math.exp", "exp")
                       .Case("math.exp2", "exp2")
                       .Case("math.expm1", "expm1")
                       .Case("math.log", "log")
                       .Case("math.log2", "log2")
                       .Case("math.log10", "log10")
                       .Case("math.log1p", "log1p")
                       .Case("math.erf", "erf")
                       .Case("math.erfc", "erfc")
                       .Case("math.tanh", "tanh")
                       .Case("math.sinh", "sinh")
                       .Case("math.cosh", "cosh")
                       .Case("math.sin", "sin")
                       .Case("math.cos", "cos")
                       .Case("math.tan", "tan")
                       .Case("math.atan", "atan")
                       .Case("math.atan2", "atan2")
                       .Case("math.sqrt", "sqrt")
                       .Case("math.powf", "pow")
                       .Case("math.floor", "floor")
                       .Case("math.ceil", "ceil")
                       .Case("math.round", "round")
                       .Case("math.roundeven", "nearbyint")
                       .Case("math.trunc", "trunc")
                       .Case("math.copysign", "copysign")
                       .Case("math.fma", "fma")
                       .Case("arith.remf", "fmod")
                       .Case("arith.maxnumf", "fmax")
                       .Case("arith.minnumf", "fmin")
                       .Default("");
  if (base.empty())
    return "";
  return base.str() + (isFloat ? "f" : "");
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
} // namespace

FailureOr<std::string>
mlir::sluice::emit::emitMapBody(MapOp map, ArrayRef<std::string> arguments,
                                ArrayRef<std::string> indices, StringRef prefix,
                                llvm::raw_ostream &os, StringRef indent) {
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
    StringRef opName = op.getName().getStringRef();
    SmallVector<std::string> in;
    for (Value operand : op.getOperands())
      in.push_back(names.lookup(operand));
    auto operandIsFloat = [&](unsigned i) {
      return op.getOperand(i).getType().isF32();
    };
    std::string expr;
    if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
      if (auto f = llvm::dyn_cast<FloatAttr>(constant.getValue()))
        expr = floatLiteral(f.getValueAsDouble(), isFloat);
      else if (auto i = llvm::dyn_cast<IntegerAttr>(constant.getValue()))
        expr = type.isInteger(1)
                   ? (i.getValue().isZero() ? "false" : "true")
                   : "(int64_t)" + std::to_string(i.getValue().getSExtValue()) +
                         "LL";
    } else if (opName == "arith.addf" || opName == "arith.addi") {
      expr = in[0] + " + " + in[1];
    } else if (opName == "arith.subf" || opName == "arith.subi") {
      expr = in[0] + " - " + in[1];
    } else if (opName == "arith.mulf" || opName == "arith.muli") {
      expr = in[0] + " * " + in[1];
    } else if (opName == "arith.divf") {
      expr = in[0] + " / " + in[1];
    } else if (opName == "arith.negf") {
      expr = "-" + in[0];
    } else if (opName == "arith.maximumf") {
      expr = std::string(isFloat ? "sluice_maximumf(" : "sluice_maximum(") +
             in[0] + ", " + in[1] + ")";
    } else if (opName == "arith.minimumf") {
      expr = std::string(isFloat ? "sluice_minimumf(" : "sluice_minimum(") +
             in[0] + ", " + in[1] + ")";
    } else if (opName == "math.rsqrt") {
      expr = std::string(isFloat ? "sluice_rsqrtf(" : "sluice_rsqrt(") + in[0] +
             ")";
    } else if (std::string fn = mathFunction(opName, isFloat); !fn.empty()) {
      expr = fn + "(" + llvm::join(in, ", ") + ")";
    } else if (opName == "arith.extf" || opName == "arith.truncf" ||
               opName == "arith.sitofp" || opName == "arith.index_cast" ||
               opName == "arith.extsi" || opName == "arith.trunci" ||
               opName == "arith.fptosi") {
      expr = "(" + resultType + ")" + in[0];
    } else if (opName == "arith.uitofp" || opName == "arith.index_castui" ||
               opName == "arith.extui" || opName == "arith.fptoui") {
      expr = "(" + resultType + ")(uint64_t)" + in[0];
    } else if (auto cmp = llvm::dyn_cast<arith::CmpFOp>(op)) {
      expr = cmpF(cmp.getPredicate(), in[0], in[1]);
    } else if (auto cmp = llvm::dyn_cast<arith::CmpIOp>(op)) {
      expr = cmpI(cmp.getPredicate(), in[0], in[1]);
    } else if (opName == "arith.select") {
      expr = in[0] + " ? " + in[1] + " : " + in[2];
    } else if (opName == "math.isnan") {
      expr = "(" + in[0] + " != " + in[0] + ")";
    } else if (opName == "math.isinf") {
      expr = "isinf(" + in[0] + ")";
    } else if (opName == "math.isfinite") {
      expr = "isfinite(" + in[0] + ")";
    } else if (opName == "arith.divsi") {
      expr = in[1] + " ? " + in[0] + " / " + in[1] + " : 0";
    } else if (opName == "arith.remsi") {
      expr = in[1] + " ? " + in[0] + " % " + in[1] + " : 0";
    } else if (opName == "arith.maxsi") {
      expr = in[0] + " >= " + in[1] + " ? " + in[0] + " : " + in[1];
    } else if (opName == "arith.minsi") {
      expr = in[0] + " <= " + in[1] + " ? " + in[0] + " : " + in[1];
    } else if (opName == "arith.andi") {
      expr = in[0] + " & " + in[1];
    } else if (opName == "arith.ori") {
      expr = in[0] + " | " + in[1];
    } else if (opName == "arith.xori") {
      expr = in[0] + " ^ " + in[1];
    }
    (void)operandIsFloat;
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
