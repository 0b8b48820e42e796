#pragma once
// A vector of trivially copyable values that keeps its first N in place and goes to the heap
// only past them. An instruction's semaphore waits and signals (models/isa/program.hpp) are one
// to four each and a large program has millions of instructions: as std::vectors they were
// two heap blocks or more apiece (one per growth), and allocating and freeing them was about a
// tenth of the serving bench's samples (perf; docs/serving.md, "Simulating the shapes").
//
// The interface is the part of std::vector's that programs use, and it converts from and to a
// std::vector of the same values, so code that builds waits in a std::vector hands them over.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace systolic {

template <class T, uint32_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies its values with memcpy");
  static_assert(N > 0, "SmallVector keeps at least one value in place");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> values) { append(values.begin(), values.size()); }
  SmallVector(const std::vector<T>& values) {
    append(values.data(), values.size());
  }  // NOLINT(google-explicit-constructor)
  SmallVector(const SmallVector& o) { append(o.data(), o.size()); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      size_ = 0;
      append(o.data(), o.size());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }
  operator std::vector<T>() const {
    return std::vector<T>(begin(), end());
  }  // NOLINT(google-explicit-constructor)

  T* data() { return on_heap() ? heap_ : local(); }
  const T* data() const { return on_heap() ? heap_ : local(); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > capacity_) grow(n);
  }
  void push_back(const T& value) {
    const T copy = value;  // `value` may be one of ours, which growing moves
    if (size_ == capacity_) grow(2 * static_cast<size_t>(capacity_));
    data()[size_++] = copy;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T{std::forward<Args>(args)...});
    return back();
  }
  // Inserts [first, last) before `pos`; the range must not lie in this vector.
  template <class It>
  T* insert(const T* pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - data());
    const size_t n = static_cast<size_t>(std::distance(first, last));
    reserve(static_cast<size_t>(size_) + n);
    T* p = data() + at;
    std::memmove(static_cast<void*>(p + n), p, (size_ - at) * sizeof(T));
    std::copy(first, last, p);
    size_ += static_cast<uint32_t>(n);
    return p;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  bool on_heap() const { return capacity_ > N; }
  T* local() { return std::launder(reinterpret_cast<T*>(local_)); }
  const T* local() const { return std::launder(reinterpret_cast<const T*>(local_)); }
  void append(const T* values, size_t n) {
    reserve(static_cast<size_t>(size_) + n);
    if (n > 0) std::memcpy(static_cast<void*>(data() + size_), values, n * sizeof(T));
    size_ += static_cast<uint32_t>(n);
  }
  void grow(size_t n) {
    T* bigger = static_cast<T*>(::operator new(n * sizeof(T)));
    if (size_ > 0) std::memcpy(static_cast<void*>(bigger), data(), size_ * sizeof(T));
    release();
    heap_ = bigger;
    capacity_ = static_cast<uint32_t>(n);
  }
  void release() {
    if (on_heap()) ::operator delete(heap_);
    capacity_ = N;
  }
  void take(SmallVector& o) {
    if (o.on_heap()) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
    } else if (o.size_ > 0) {
      std::memcpy(local_, o.local_, o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.capacity_ = N;
    o.size_ = 0;
  }

  union {
    alignas(T) unsigned char local_[N * sizeof(T)];  // capacity_ == N
    T* heap_;                                        // capacity_ > N
  };
  uint32_t size_ = 0, capacity_ = N;
};

}  // namespace systolic
