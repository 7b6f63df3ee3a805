#include "core/mapped-file.h"

#include <cstddef>
#include <cstdint>
#include <new>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace rt {

#ifdef _WIN32

std::shared_ptr<mapped_file> mapped_file::open(const std::string & path, std::string & error) {
  std::shared_ptr<mapped_file> m(new mapped_file());
  m->path_ = path;
  const int wlen = MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, nullptr, 0);
  std::wstring wpath(static_cast<size_t>(wlen > 0 ? wlen : 1), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, &wpath[0], wlen);
  HANDLE f = CreateFileW(wpath.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (f == INVALID_HANDLE_VALUE) {
    error = path + ": cannot open (Windows error " + std::to_string(GetLastError()) + ")";
    return nullptr;
  }
  m->file_ = f;
  if (GetFileType(f) != FILE_TYPE_DISK) {
    error = path + ": not a regular file";
    return nullptr;
  }
  LARGE_INTEGER size;
  if (!GetFileSizeEx(f, &size)) {
    error = path + ": cannot read the file size";
    return nullptr;
  }
  m->size_ = static_cast<size_t>(size.QuadPart);
  if (m->size_ == 0) return m;
  HANDLE map = CreateFileMappingW(f, nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (!map) {
    error = path + ": cannot map (Windows error " + std::to_string(GetLastError()) + ")";
    return nullptr;
  }
  m->mapping_ = map;
  m->data_ = static_cast<const unsigned char *>(MapViewOfFile(map, FILE_MAP_READ, 0, 0, 0));
  if (!m->data_) {
    error = path + ": cannot map a view (Windows error " + std::to_string(GetLastError()) + ")";
    return nullptr;
  }
  return m;
}

mapped_file::~mapped_file() {
  if (data_) UnmapViewOfFile(data_);
  if (mapping_) CloseHandle(mapping_);
  if (file_) CloseHandle(file_);
}

#else

std::shared_ptr<mapped_file> mapped_file::open(const std::string & path, std::string & error) {
  std::shared_ptr<mapped_file> m(new mapped_file());
  m->path_ = path;
  // Without O_NONBLOCK, opening a FIFO waits for a writer; on the regular file that is kept it changes nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open (" + std::strerror(errno) + ")";
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error = path + ": cannot stat (" + std::strerror(errno) + ")";
    ::close(fd);
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    ::close(fd);
    return nullptr;
  }
  m->size_ = static_cast<size_t>(st.st_size);
  if (m->size_ > 0) {
    void * p = mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = path + ": cannot mmap (" + std::strerror(errno) + ")";
      ::close(fd);
      return nullptr;
    }
    m->data_ = static_cast<const unsigned char *>(p);
  }
  ::close(fd);
  return m;
}

mapped_file::~mapped_file() {
  if (data_) munmap(const_cast<unsigned char *>(data_), size_);
}

#endif

void mapped_file::release(const void * p, size_t n) const {
  const auto * b = static_cast<const unsigned char *>(p);
  if (data_ == nullptr || b < data_ || n > size_ || b - data_ > static_cast<std::ptrdiff_t>(size_ - n)) return;
#ifdef _WIN32
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  const uintptr_t page = si.dwPageSize;
#else
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
#endif
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(b) + page - 1) / page * page;
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(b) + n) / page * page;
  if (hi <= lo) return;
#ifdef _WIN32
  // On pages that are not locked, VirtualUnlock takes them out of the working set.
  VirtualUnlock(reinterpret_cast<void *>(lo), hi - lo);
#else
  madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_DONTNEED);
#endif
}

bool read_regular_file(const std::string & path, std::string & out, std::string & error) {
  auto m = mapped_file::open(path, error);
  if (!m) return false;
  try {
    out.assign(reinterpret_cast<const char *>(m->data()), m->size());
  } catch (const std::bad_alloc &) {
    error = path + ": cannot allocate " + std::to_string(m->size()) + " bytes for its contents";
    return false;
  }
  return true;
}

}  // namespace rt
