// .npy / .npz: round trips, byte layout, numpy interoperability both ways, and corrupt files.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>

#include "io/npz.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Runs a numpy script; fails the test (never skips) when the interpreter or numpy is missing.
void run_numpy(const TempDir& dir, const std::string& script) {
  REQUIRE_MESSAGE(::access("/usr/bin/python3", X_OK) == 0,
                  "/usr/bin/python3 is missing: apt-get install python3-numpy");
  REQUIRE_MESSAGE(std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0,
                  "numpy is missing for /usr/bin/python3: apt-get install python3-numpy");
  spit(dir / "script.py", script);
  const std::string log = dir / "script.log";
  int rc = std::system(("cd '" + dir.path + "' && /usr/bin/python3 script.py > '" + log + "' 2>&1").c_str());
  REQUIRE_MESSAGE(rc == 0, "numpy script failed:\n", slurp(log));
}

Npz sample() {
  Npz z;
  Array<float> f32 = Array<float>::from_shape({2, 3});
  for (std::size_t i = 0; i < f32.size(); ++i) f32.data()[i] = 0.25f * float(i) - 1.0f;
  z.add("f32", f32);
  z.add("f64", Array<double>(3.141592653589793));  // 0-d
  z.add("i64", IndexArray{-2, 0, 7, Index(1) << 40});
  z.add("mask", Mask{{true, false}, {false, true}});
  Array<double> w = Array<double>::from_shape({1, 2, 1});
  w(0, 0, 0) = 1e-300;
  w(0, 1, 0) = -0.0;
  z.add("nested/name.w", w);
  z.add("empty", Array<double>::from_shape({0, 3}));
  return z;
}

void check_same(const Npz& a, const Npz& b) {
  REQUIRE(a.keys() == b.keys());
  for (const auto& [key, x] : a.entries()) {
    const NpyArray& y = b.at(key);
    INFO("key ", key);
    CHECK(x.dtype() == y.dtype());
    CHECK(x.shape() == y.shape());
    CHECK(npy_encode(x) == npy_encode(y));  // bit-identical data
  }
}

}  // namespace

TEST_CASE("npy header: magic, version 1.0, 64-byte aligned, Python dict") {
  for (const NpyArray& a : {NpyArray(Array<double>(1.0)), NpyArray(Array<float>{1.f, 2.f}),
                            NpyArray(IndexArray::from_shape({2, 3, 4, 5})), NpyArray(Mask{true})}) {
    const std::string b = npy_encode(a);
    CHECK(b.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
    const std::size_t header_len = std::size_t(static_cast<unsigned char>(b[8])) |
                                   std::size_t(static_cast<unsigned char>(b[9])) << 8;
    CHECK((10 + header_len) % 64 == 0);
    CHECK(b[10 + header_len - 1] == '\n');
    CHECK(b.size() == 10 + header_len + a.size() * (a.dtype() == DType::Bool ? 1 : a.dtype() == DType::Float32 ? 4 : 8));
  }
  const std::string h = npy_encode(NpyArray(Array<float>{1.f, 2.f}));
  CHECK(h.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") != std::string::npos);
  const std::string s = npy_encode(NpyArray(Array<double>(1.0)));
  CHECK(s.find("'shape': ()") != std::string::npos);
}

TEST_CASE("npy and npz round trip every dtype and rank") {
  TempDir dir;
  const Npz z = sample();
  for (const auto& [key, a] : z.entries()) {
    save_npy(dir / "a.npy", a);
    const NpyArray back = load_npy(dir / "a.npy");
    INFO("key ", key);
    CHECK(npy_encode(back) == npy_encode(a));
  }
  save_npz(dir / "z.npz", z);
  check_same(z, load_npz(dir / "z.npz"));
  CHECK(load_npz(dir / "z.npz").at("f64").get<double>()() == 3.141592653589793);
  CHECK(load_npz(dir / "z.npz").at("i64").get<Index>()(3) == Index(1) << 40);
  // An empty archive is valid.
  save_npz(dir / "none.npz", Npz());
  CHECK(load_npz(dir / "none.npz").size() == 0);
  // Only the targets remain: no temporaries.
  CHECK(list_dir(dir.path).size() == 3);
}

TEST_CASE("NpyArray accessors check the dtype; to<T>() converts numbers") {
  NpyArray a(IndexArray{1, 2, 3});
  CHECK_THROWS_AS(a.get<double>(), IoError);
  CHECK(a.to<double>() == Array<double>{1.0, 2.0, 3.0});
  CHECK_THROWS_AS(NpyArray(Mask{true}).to<float>(), IoError);
  Npz z;
  z.add("x", a);
  CHECK_THROWS_AS(z.add("x", a), IoError);
  CHECK(error_of<IoError>([&] { z.at("y"); }).find("'y'") != std::string::npos);
}

TEST_CASE("numpy reads what we write") {
  TempDir dir;
  save_npz(dir / "from_cpp.npz", sample());
  save_npy(dir / "from_cpp.npy", NpyArray(Array<float>{{1.5f, -2.f}}));
  run_numpy(dir, R"PY(
import numpy as np
z = np.load("from_cpp.npz")
assert sorted(z.files) == sorted(["f32", "f64", "i64", "mask", "nested/name.w", "empty"]), z.files
assert z["f32"].dtype == np.dtype("<f4") and z["f32"].shape == (2, 3)
assert (z["f32"] == (np.arange(6, dtype=np.float32) * 0.25 - 1).reshape(2, 3)).all()
assert z["f64"].dtype == np.float64 and z["f64"].shape == () and z["f64"] == 3.141592653589793
assert z["i64"].dtype == np.int64 and list(z["i64"]) == [-2, 0, 7, 1 << 40]
assert z["mask"].dtype == np.bool_ and (z["mask"] == np.array([[True, False], [False, True]])).all()
w = z["nested/name.w"]
assert w.shape == (1, 2, 1) and w[0, 0, 0] == 1e-300 and np.signbit(w[0, 1, 0])
assert z["empty"].shape == (0, 3) and z["empty"].dtype == np.float64
a = np.load("from_cpp.npy")
assert a.dtype == np.float32 and a.shape == (1, 2) and list(a[0]) == [1.5, -2.0]
)PY");
}

TEST_CASE("we read what numpy writes: np.save, np.savez, np.savez_compressed, Fortran order") {
  TempDir dir;
  run_numpy(dir, R"PY(
import numpy as np
np.save("py.npy", np.arange(24, dtype="<f8").reshape(2, 3, 4) / 8)
np.savez("py.npz", a=np.arange(6, dtype=np.float32).reshape(2, 3), s=np.array(2.5),
         b=np.array([True, False, True]), i=np.array([[1, -2], [3, 4]], dtype=np.int64),
         f=np.asfortranarray(np.arange(6.0).reshape(2, 3)))
np.savez_compressed("pyc.npz", big=np.linspace(0, 1, 1000), z=np.zeros(500, dtype=np.float32))
)PY");
  const NpyArray a = load_npy(dir / "py.npy");
  REQUIRE(a.shape() == Shape{2, 3, 4});
  for (std::size_t i = 0; i < 24; ++i) CHECK(a.get<double>().data()[i] == double(i) / 8);

  const Npz z = load_npz(dir / "py.npz");
  CHECK(z.keys() == std::vector<std::string>{"a", "s", "b", "i", "f"});
  CHECK(z.at("a").get<float>() == Array<float>{{0, 1, 2}, {3, 4, 5}});
  CHECK(z.at("s").shape().empty());
  CHECK(z.at("s").get<double>()() == 2.5);
  CHECK(z.at("b").get<bool>() == Mask{true, false, true});
  CHECK(z.at("i").get<Index>() == IndexArray{{1, -2}, {3, 4}});
  // Stored column-major, returned row-major with the same logical values.
  CHECK(z.at("f").get<double>() == Array<double>{{0, 1, 2}, {3, 4, 5}});

  const Npz c = load_npz(dir / "pyc.npz");
  const auto& big = c.at("big").get<double>();
  REQUIRE(big.size() == 1000);
  CHECK(big(0) == 0.0);
  CHECK(big(999) == 1.0);
  CHECK(big(500) == doctest::Approx(500.0 / 999.0).epsilon(1e-15));
  CHECK(c.at("z").get<float>() == Array<float>(xt::zeros<float>({500})));
  // Compressed members really were deflated (so this exercised inflate): 10,000 data bytes.
  CHECK(slurp(dir / "pyc.npz").size() < 10000);
}

TEST_CASE("every truncation and every corrupted data byte of an .npz gives IoError, never a crash") {
  TempDir dir;
  save_npz(dir / "z.npz", sample());
  const std::string good = slurp(dir / "z.npz");
  for (std::size_t n = 0; n < good.size(); ++n) {
    spit(dir / "t.npz", good.substr(0, n));
    INFO("truncated to ", n, " bytes");
    const std::string msg = error_of<IoError>([&] { load_npz(dir / "t.npz"); });
    CHECK(msg.find(dir / "t.npz") != std::string::npos);
  }
  // Flip each byte in turn: either the file still decodes to the same arrays (the byte was in a
  // field we do not interpret: timestamps, attributes), or loading throws IoError.
  std::size_t rejected = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5A);
    spit(dir / "c.npz", bad);
    try {
      check_same(sample(), load_npz(dir / "c.npz"));
    } catch (const IoError&) {
      ++rejected;
    }
  }
  CHECK(rejected > good.size() * 3 / 4);
}

TEST_CASE("corrupt files name the file and the fault") {
  TempDir dir;
  Npz one;
  one.add("w", Array<double>{1.0, 2.0, 3.0});
  save_npz(dir / "w.npz", one);
  std::string b = slurp(dir / "w.npz");
  // The last data byte sits just before the central directory ("PK\1\2").
  std::size_t cd = b.find(std::string("PK\x01\x02", 4));
  b[cd - 1] ^= 1;
  spit(dir / "crc.npz", b);
  std::string msg = error_of<IoError>([&] { load_npz(dir / "crc.npz"); });
  CHECK(msg.find("crc.npz") != std::string::npos);
  CHECK(msg.find("CRC-32 mismatch") != std::string::npos);
  CHECK(msg.find("'w.npy'") != std::string::npos);

  CHECK(error_of<IoError>([&] { load_npz(dir / "missing.npz"); }).find("cannot open") != std::string::npos);
  spit(dir / "text.npz", std::string(100, 'x'));
  CHECK(error_of<IoError>([&] { load_npz(dir / "text.npz"); }).find("not a ZIP archive") != std::string::npos);

  std::string npy = npy_encode(NpyArray(Array<double>{1.0, 2.0}));
  spit(dir / "magic.npy", "X" + npy.substr(1));
  CHECK(error_of<IoError>([&] { load_npy(dir / "magic.npy"); }).find("magic") != std::string::npos);
  std::string big_endian = npy;
  big_endian.replace(big_endian.find("<f8"), 3, ">f8");
  spit(dir / "be.npy", big_endian);
  CHECK(error_of<IoError>([&] { load_npy(dir / "be.npy"); }).find("unsupported dtype '>f8'") != std::string::npos);
  std::string bad_shape = npy;
  bad_shape.replace(bad_shape.find("(2,)"), 4, "(3,)");
  spit(dir / "short.npy", bad_shape);
  CHECK(error_of<IoError>([&] { load_npy(dir / "short.npy"); }).find("truncated data") != std::string::npos);
  // A zero beside a huge size holds nothing, but its strides would wrap: refused. The header keeps
  // its length (the padding before its newline shrinks), so only the shape is at fault.
  std::string huge = npy;
  const std::string wide = "(0, 4611686018427387904, 4)";
  huge.replace(huge.find("(2,)"), 4, wide);
  huge.erase(huge.find('\n') - (wide.size() - 4), wide.size() - 4);
  spit(dir / "huge.npy", huge);
  CHECK(error_of<IoError>([&] { load_npy(dir / "huge.npy"); }).find("has more than 2^48 entries") != std::string::npos);
  std::string bad_header = npy;
  bad_header.replace(bad_header.find("'shape'"), 7, "'shapf'");
  spit(dir / "key.npy", bad_header);
  CHECK(error_of<IoError>([&] { load_npy(dir / "key.npy"); }).find("'shapf'") != std::string::npos);
  spit(dir / "long.npy", npy + "!");
  CHECK(error_of<IoError>([&] { load_npy(dir / "long.npy"); }).find("unexpected bytes") != std::string::npos);
  std::string bool_npy = npy_encode(NpyArray(Mask{true, false}));
  bool_npy.back() = 7;
  CHECK(error_of<IoError>([&] { npy_decode(bool_npy, "mask"); }).find("must be 0 or 1") != std::string::npos);
}

TEST_CASE("a folder, a device or a pipe given as the path is refused by name (issue 19)") {
  TempDir dir;
  REQUIRE(::mkdir((dir / "folder.npz").c_str(), 0755) == 0);
  REQUIRE(::mkfifo((dir / "pipe.npy").c_str(), 0644) == 0);
  // Was "not a ZIP archive (0 bytes)" for a folder; /dev/zero read until memory ran out, and a
  // pipe without a writer blocked forever in open.
  CHECK(error_of<IoError>([&] { load_npz(dir / "folder.npz"); }) ==
        "load_npz: cannot read '" + (dir / "folder.npz") + "': it is a directory");
  CHECK(error_of<IoError>([&] { load_npy(dir / "folder.npz"); }) ==
        "load_npy: cannot read '" + (dir / "folder.npz") + "': it is a directory");
  CHECK(error_of<IoError>([&] { load_npz("/dev/zero"); }) ==
        "load_npz: cannot read '/dev/zero': not a regular file (a character device)");
  CHECK(error_of<IoError>([&] { load_npy("/dev/zero"); }) ==
        "load_npy: cannot read '/dev/zero': not a regular file (a character device)");
  CHECK(error_of<IoError>([&] { load_npy(dir / "pipe.npy"); }) ==
        "load_npy: cannot read '" + (dir / "pipe.npy") + "': not a regular file (a pipe)");
}

TEST_CASE("npz_decode reads an archive from memory and names its source") {
  TempDir dir;
  save_npz(dir / "z.npz", sample());
  check_same(sample(), npz_decode(slurp(dir / "z.npz"), "in memory"));
  CHECK(error_of<IoError>([&] { npz_decode("PK", "buffer 7"); }) == "buffer 7: not a ZIP archive (2 bytes)");
}

TEST_CASE("a save whose rename cannot happen removes its temporary and reports the path") {
  TempDir dir;
  // The target is a non-empty folder: rename(file, folder) fails after the data was written.
  REQUIRE(::mkdir((dir / "target.npz").c_str(), 0755) == 0);
  spit(dir / "target.npz/keep", "x");
  const std::string msg = error_of<IoError>([&] { save_npz(dir / "target.npz", sample()); });
  CHECK(msg.find("save_npz: cannot write '" + (dir / "target.npz") + "': rename") != std::string::npos);
  CHECK(list_dir(dir.path) == std::vector<std::string>{"target.npz"});
  CHECK(slurp(dir / "target.npz/keep") == "x");
  // A missing folder fails at the first step, leaving nothing behind either.
  CHECK(error_of<IoError>([&] { save_npy(dir / "no/such/dir/a.npy", NpyArray(Array<double>(1.0))); })
            .find("creating a temporary file") != std::string::npos);
}
