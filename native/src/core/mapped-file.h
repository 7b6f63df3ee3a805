#pragma once
// A read-only memory mapping of a whole file (POSIX mmap; CreateFileMapping on Windows).
#include <cstddef>
#include <memory>
#include <string>

namespace rt {

class mapped_file {
 public:
  /**
   * Maps `path`, which must be a regular file (a FIFO or device is refused, not waited on); returns nullptr with
   * `error` naming the file on failure.
   */
  static std::shared_ptr<mapped_file> open(const std::string & path, std::string & error);
  ~mapped_file();
  mapped_file(const mapped_file &) = delete;
  mapped_file & operator=(const mapped_file &) = delete;

  const unsigned char * data() const { return data_; }
  size_t size() const { return size_; }
  const std::string & path() const { return path_; }
  /**
   * Drops the whole pages of [p, p + n) that lie in this mapping from the process's resident memory; a later read
   * maps them again from the file, unchanged (the mapping is read-only). A range outside the mapping is ignored.
   */
  void release(const void * p, size_t n) const;

 private:
  mapped_file() = default;
  std::string path_;
  const unsigned char * data_ = nullptr;
  size_t size_ = 0;
#ifdef _WIN32
  void * file_ = nullptr;
  void * mapping_ = nullptr;
#endif
};

/** Reads the whole regular file `path` into `out`; on failure returns false with `error` naming the file. */
bool read_regular_file(const std::string & path, std::string & out, std::string & error);

}  // namespace rt
