//===- SluiceTypes.cpp - sluice types -------------------------------------===//

#include "dialects/sluice/SluiceTypes.h"
#include "dialects/sluice/SluiceDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice;

#define GET_TYPEDEF_CLASSES
#include "dialects/sluice/SluiceTypes.cpp.inc"

void SluiceDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/sluice/SluiceTypes.cpp.inc"
      >();
}

bool mlir::sluice::isSupportedElementType(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

LogicalResult
NamedTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                   ArrayRef<StringAttr> dimNames, ArrayRef<int64_t> sizes,
                   Type elementType) {
  if (dimNames.size() != sizes.size())
    return emitError() << "tensor has " << dimNames.size()
                       << " dimension names but " << sizes.size() << " sizes";
  llvm::SmallSet<StringRef, 8> seen;
  for (auto [name, size] : llvm::zip(dimNames, sizes)) {
    if (!name || name.getValue().empty())
      return emitError() << "tensor dimension names must not be empty";
    if (!seen.insert(name.getValue()).second)
      return emitError() << "tensor dimension '" << name.getValue()
                         << "' appears more than once";
    if (size <= 0)
      return emitError() << "tensor dimension '" << name.getValue()
                         << "' has size " << size << "; sizes must be positive";
  }
  if (!isSupportedElementType(elementType))
    return emitError() << "tensor element type must be f32, f16 or bf16, got "
                       << elementType;
  return success();
}

NamedTensorType NamedTensorType::get(MLIRContext *context,
                           ArrayRef<std::pair<StringRef, int64_t>> dims,
                           Type elementType) {
  SmallVector<StringAttr> names;
  SmallVector<int64_t> sizes;
  for (auto [name, size] : dims) {
    names.push_back(StringAttr::get(context, name));
    sizes.push_back(size);
  }
  return Base::get(context, names, sizes, elementType);
}

NamedTensorType
NamedTensorType::getChecked(function_ref<InFlightDiagnostic()> emitError,
                       MLIRContext *context, ArrayRef<StringAttr> dimNames,
                       ArrayRef<int64_t> sizes, Type elementType) {
  return Base::getChecked(emitError, context, dimNames, sizes, elementType);
}

std::optional<unsigned> NamedTensorType::getDimPosition(StringRef name) const {
  for (auto [index, dim] : llvm::enumerate(getDimNames()))
    if (dim.getValue() == name)
      return index;
  return std::nullopt;
}

int64_t NamedTensorType::getDimSize(StringRef name) const {
  std::optional<unsigned> position = getDimPosition(name);
  assert(position && "no such dimension");
  return getSizes()[*position];
}

std::optional<uint64_t> NamedTensorType::getNumElements() const {
  uint64_t count = 1;
  for (int64_t size : getSizes())
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(size), &count))
      return std::nullopt;
  return count;
}

unsigned NamedTensorType::getElementByteWidth() const {
  return (getElementType().getIntOrFloatBitWidth() + 7) / 8;
}

std::optional<uint64_t> NamedTensorType::getNumBytes() const {
  std::optional<uint64_t> count = getNumElements();
  uint64_t bytes;
  if (!count ||
      __builtin_mul_overflow(*count, uint64_t(getElementByteWidth()), &bytes))
    return std::nullopt;
  return bytes;
}

std::optional<uint64_t> NamedTensorType::getStoredBytes(bool bitPacked) const {
  if (!bitPacked)
    return getNumBytes();
  std::optional<uint64_t> count = getNumElements();
  if (!count)
    return std::nullopt;
  return *count / 8 + (*count % 8 != 0);
}

NamedTensorType NamedTensorType::withLayout(ArrayRef<StringAttr> order) const {
  SmallVector<int64_t> sizes;
  for (StringAttr name : order)
    sizes.push_back(getDimSize(name.getValue()));
  return Base::get(getContext(), order, sizes, getElementType());
}

NamedTensorType NamedTensorType::withElementType(Type elementType) const {
  return Base::get(getContext(), getDimNames(), getSizes(), elementType);
}

NamedTensorType NamedTensorType::dropDims(ArrayRef<StringAttr> names) const {
  SmallVector<StringAttr> keptNames;
  SmallVector<int64_t> keptSizes;
  for (auto [name, size] : llvm::zip(getDimNames(), getSizes())) {
    if (llvm::is_contained(names, name))
      continue;
    keptNames.push_back(name);
    keptSizes.push_back(size);
  }
  return Base::get(getContext(), keptNames, keptSizes, getElementType());
}

bool NamedTensorType::hasSameDims(NamedTensorType other) const {
  if (getRank() != other.getRank())
    return false;
  for (auto [name, size] : llvm::zip(getDimNames(), getSizes())) {
    std::optional<unsigned> position = other.getDimPosition(name.getValue());
    if (!position || other.getSizes()[*position] != size)
      return false;
  }
  return true;
}

// !sluice.tensor<[b=8, j=512, i=1024], f16>
Type NamedTensorType::parse(AsmParser &parser) {
  SmallVector<StringAttr> names;
  SmallVector<int64_t> sizes;
  auto parseDim = [&]() -> ParseResult {
    std::string name;
    int64_t size;
    if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    names.push_back(StringAttr::get(parser.getContext(), name));
    sizes.push_back(size);
    return success();
  };
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseComma() || parser.parseType(elementType) ||
      parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), names, sizes, elementType);
}

void NamedTensorType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(llvm::zip(getDimNames(), getSizes()), printer,
                        [&](auto dim) {
                          printer.printKeywordOrString(
                              std::get<0>(dim).getValue());
                          printer << "=" << std::get<1>(dim);
                        });
  printer << "], " << getElementType() << ">";
}
