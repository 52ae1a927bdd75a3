//===- Npy.h - reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The .npy files `sluicec run` and the tests exchange with NumPy/PyTorch:
// format versions 1.0, 2.0 and 3.0, little-endian f16/f32/f64, C order.
// See https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_SUPPORT_NPY_H
#define SLUICE_SUPPORT_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::sluice {

/// The element types a .npy file may hold here ('<f2', '<f4', '<f8').
enum class NpyDType { F16, F32, F64 };

/// An array read from a .npy file: C-order elements widened to double.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<double> data;
  NpyDType dtype = NpyDType::F64;
};

/// Parses the bytes of a .npy file; `name` (usually the path) prefixes every
/// error message. Fails on a bad magic string or version, a malformed
/// header, a dtype other than '<f2'/'<f4'/'<f8' (big-endian included),
/// fortran_order True, or data shorter or longer than the shape says.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef name);

/// Reads and parses the .npy file at `path`: a regular file of at most
/// kMaxNpyFileBytes (sluice/Support/InputLimits.h); a FIFO or device is
/// refused before it is opened.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

/// How many elements of an array are NaN or infinite.
struct NonFiniteCount {
  uint64_t nan = 0;
  uint64_t infinite = 0;
  /// The flat index of the first one (valid when nan + infinite > 0).
  uint64_t firstIndex = 0;
};

/// Counts the NaN and infinite values of `data`.
NonFiniteCount countNonFinite(llvm::ArrayRef<double> data);

/// The bytes of a .npy file (version 1.0, or 2.0 if the header needs it)
/// holding `data` in C order with `shape`, as '<f4' or '<f8' (`dtype` F16 is
/// refused). Fails if the data size does not match the shape.
llvm::Expected<std::string> serializeNpy(llvm::ArrayRef<int64_t> shape,
                                         llvm::ArrayRef<double> data,
                                         NpyDType dtype);

/// Writes a .npy file atomically: to a temporary file in the same directory,
/// then renamed over `path`. Errors name the path.
llvm::Error writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<double> data, NpyDType dtype);

} // namespace mlir::sluice

#endif // SLUICE_SUPPORT_NPY_H
