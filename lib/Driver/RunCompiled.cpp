//===- RunCompiled.cpp - run a layer with a compiled module ---------------===//

#include "sluice/Driver/RunCompiled.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>

using namespace mlir;
using namespace mlir::sluice;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static const llvm::fltSemantics &getSemantics(ModuleDType dtype) {
  switch (dtype) {
  case ModuleDType::F16:
    return llvm::APFloat::IEEEhalf();
  case ModuleDType::BF16:
    return llvm::APFloat::BFloat();
  case ModuleDType::F32:
    break;
  }
  return llvm::APFloat::IEEEsingle();
}

namespace mlir::sluice {
std::vector<uint8_t> encodeTensor(llvm::ArrayRef<double> values,
                                  ModuleDType dtype) {
  unsigned width = getByteWidth(dtype);
  std::vector<uint8_t> bytes(values.size() * width);
  for (auto [index, value] : llvm::enumerate(values)) {
    if (dtype == ModuleDType::F32) {
      float f = static_cast<float>(value);
      std::memcpy(&bytes[index * 4], &f, 4);
      continue;
    }
    llvm::APFloat rounded(value);
    bool losesInfo;
    rounded.convert(getSemantics(dtype), llvm::APFloat::rmNearestTiesToEven,
                    &losesInfo);
    uint16_t bits =
        static_cast<uint16_t>(rounded.bitcastToAPInt().getZExtValue());
    std::memcpy(&bytes[index * 2], &bits, 2);
  }
  return bytes;
}

std::vector<double> decodeTensor(llvm::ArrayRef<uint8_t> bytes,
                                 ModuleDType dtype) {
  unsigned width = getByteWidth(dtype);
  std::vector<double> values(bytes.size() / width);
  for (size_t index = 0; index < values.size(); ++index) {
    if (dtype == ModuleDType::F32) {
      float f;
      std::memcpy(&f, &bytes[index * 4], 4);
      values[index] = f;
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, &bytes[index * 2], 2);
    llvm::APFloat value(getSemantics(dtype), llvm::APInt(16, bits));
    bool losesInfo;
    value.convert(llvm::APFloat::IEEEdouble(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    values[index] = value.convertToDouble();
  }
  return values;
}
} // namespace mlir::sluice

static std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [index, size] : llvm::enumerate(shape))
    text += (index ? ", " : "") + std::to_string(size);
  return text + "]";
}

static int64_t getNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

namespace {
/// A boundary tensor in the module's dtype.
struct DeviceTensor {
  ModuleDType dtype;
  std::vector<uint8_t> bytes;
};
} // namespace

namespace mlir::sluice {
llvm::Expected<std::vector<NamedArray>>
runCompiledModule(ModuleOp module, LoadedModule &library,
                  llvm::ArrayRef<NamedArray> inputs, uint64_t seed) {
  llvm::Expected<RunSignature> signature = getRunSignature(module);
  if (!signature)
    return signature.takeError();

  // Every expected input exactly once, with its logical shape (the words of
  // runModule, so both backends fail alike).
  llvm::StringMap<const NamedArray *> given;
  for (const NamedArray &input : inputs)
    if (!given.insert({input.name, &input}).second)
      return makeError("input '" + input.name + "' is given twice");
  llvm::StringMap<const NamedArray *> expectedInputs, expectedOutputs;
  for (const NamedArray &expected : signature->inputs) {
    auto it = given.find(expected.name);
    if (it == given.end())
      return makeError("missing input '" + expected.name + "' (shape " +
                       formatShape(expected.shape) + ")");
    if (it->second->shape != expected.shape)
      return makeError("input '" + expected.name + "' has shape " +
                       formatShape(it->second->shape) + ", expected " +
                       formatShape(expected.shape));
    expectedInputs[expected.name] = it->second;
    given.erase(it);
  }
  if (!given.empty())
    return makeError("unexpected input '" + given.begin()->getKey() +
                     "'; this layer takes no tensor of that name");
  for (const NamedArray &expected : signature->outputs)
    expectedOutputs[expected.name] = &expected;

  unsigned expectedPhases = 1;
  for (GraphOp graph : module.getOps<GraphOp>())
    if (graph.getPhase() == Phase::backward)
      expectedPhases = 2;
  if (library.getNumPhases() != expectedPhases)
    return makeError(
        "module '" + library.getPath() + "' has " +
        llvm::Twine(library.getNumPhases()) + " phases, but the layer needs " +
        llvm::Twine(expectedPhases) + " (was it compiled from another spec?)");

  // Phase by phase; a forward output (y) feeds the backward phase.
  llvm::StringMap<DeviceTensor> values;
  for (unsigned phase = 0; phase < library.getNumPhases(); ++phase) {
    std::vector<void *> pointers;
    for (const ModuleTensor &tensor : library.getTensors(phase)) {
      auto where = [&]() -> std::string {
        return ("module '" + library.getPath() + "' " +
                (phase == 0 ? "forward" : "backward") + " tensor '" +
                tensor.name + "'")
            .str();
      };
      const NamedArray *described = nullptr;
      if (auto it = expectedInputs.find(tensor.name);
          it != expectedInputs.end())
        described = it->second;
      else if (auto it = expectedOutputs.find(tensor.name);
               it != expectedOutputs.end())
        described = it->second;
      if (!described)
        return makeError(where() + " is not a boundary tensor of this layer");
      if (tensor.getNumElements() != getNumElements(described->shape))
        return makeError(where() + " has dims " + formatShape(tensor.dims) +
                         ", but the layer's tensor has shape " +
                         formatShape(described->shape));
      auto [slot, isNew] = values.try_emplace(tensor.name);
      DeviceTensor &value = slot->second;
      if (isNew) {
        if (tensor.isOutput) {
          value.dtype = tensor.dtype;
          value.bytes.assign(
              tensor.getNumElements() * getByteWidth(tensor.dtype), 0);
        } else if (auto it = expectedInputs.find(tensor.name);
                   it != expectedInputs.end()) {
          value.dtype = tensor.dtype;
          value.bytes = encodeTensor(it->second->data, tensor.dtype);
        } else {
          return makeError(where() + " is read before any phase writes it");
        }
      } else if (value.dtype != tensor.dtype) {
        return makeError(where() + " is " + stringifyModuleDType(tensor.dtype) +
                         " here but was " + stringifyModuleDType(value.dtype));
      }
      pointers.push_back(value.bytes.data());
    }
    if (llvm::Error error = library.run(phase, pointers, seed))
      return std::move(error);
  }

  std::vector<NamedArray> result;
  for (const NamedArray &expected : signature->outputs) {
    auto it = values.find(expected.name);
    if (it == values.end())
      return makeError("module '" + library.getPath() + "' does not write '" +
                       expected.name + "'");
    NamedArray output = expected;
    output.data = decodeTensor(it->second.bytes, it->second.dtype);
    result.push_back(std::move(output));
  }
  return result;
}
} // namespace mlir::sluice
