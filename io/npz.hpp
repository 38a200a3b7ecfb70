// NumPy's .npy and .npz files, read and written without numpy.
//
// .npy (format 1.0): "\x93NUMPY", version 1.0, a little-endian uint16 header length, a Python
// dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and
// a final '\n' so the data starts on a 64-byte boundary, then the raw little-endian data.
// Types: '<f4', '<f8', '<i8', '|b1', any rank including 0-d. Reading also accepts versions 2.0
// and 3.0 (uint32 header length) and fortran_order True (the data is transposed on load).
//
// .npz: a ZIP archive with one "<key>.npy" member per array. We write members stored (method 0)
// with their CRC-32; we read stored and deflated members (np.savez_compressed), including the
// ZIP64 extra fields numpy always writes.
//
// Every save goes through AtomicFile (io/files.hpp): an interrupted save leaves the previous file
// intact, and a failed one removes its temporary. Every load validates everything and throws
// IoError naming the file and the fault.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/array.hpp"
#include "io/files.hpp"

namespace attnlab {

enum class DType { Float32, Float64, Int64, Bool };
const char* dtype_descr(DType d);  // "<f4", "<f8", "<i8", "|b1"

// One array of any of the four supported element types.
class NpyArray {
 public:
  NpyArray() : v_(Array<double>()) {}
  NpyArray(Array<float> a) : v_(std::move(a)) {}
  NpyArray(Array<double> a) : v_(std::move(a)) {}
  NpyArray(IndexArray a) : v_(std::move(a)) {}
  NpyArray(Mask a) : v_(std::move(a)) {}

  DType dtype() const { return static_cast<DType>(v_.index()); }
  Shape shape() const;
  std::size_t size() const;

  // The array itself; throws IoError if it holds another element type.
  // E is float, double, Index or bool.
  template <class E>
  const xt::xarray<E, xt::layout_type::row_major>& get() const;

  // A copy converted to float or double, from any numeric type ('<f4', '<f8', '<i8');
  // throws IoError for '|b1'.
  template <class T>
  Array<T> to() const;

  // f(const xt::xarray<E>&) with the array's own element type E.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), v_);
  }

 private:
  std::variant<Array<float>, Array<double>, IndexArray, Mask> v_;
};

// The arrays of an .npz archive, in file order, looked up by key (member name without ".npy").
class Npz {
 public:
  void add(const std::string& key, NpyArray a);  // throws IoError on an empty or repeated key
  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  const NpyArray& at(const std::string& key) const;  // throws IoError naming the missing key
  std::size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, NpyArray>>& entries() const { return entries_; }
  std::vector<std::string> keys() const;

 private:
  std::vector<std::pair<std::string, NpyArray>> entries_;
  std::map<std::string, std::size_t> index_;
};

// In-memory encoding; `what` names the source in error messages ("load_npz: 'ckpt.npz'").
std::string npy_encode(const NpyArray& a);
NpyArray npy_decode(const std::string& bytes, const std::string& what);
Npz npz_decode(const std::string& bytes, const std::string& what);

// The loaders read regular files only: a folder, a device or a pipe is an IoError naming it.
void save_npy(const std::string& path, const NpyArray& a);
NpyArray load_npy(const std::string& path);
void save_npz(const std::string& path, const Npz& arrays);
Npz load_npz(const std::string& path);

}  // namespace attnlab
