#ifndef SPARKTORCH_CORE_DATA_FLOAT_BUFFER_H_
#define SPARKTORCH_CORE_DATA_FLOAT_BUFFER_H_

#include <cstddef>
#include <memory>

namespace sparktorch {

class SpillBudget;

// A growable array of floats for the rows a job reads. It starts in anonymous memory of its
// own: the kernel is asked to back it with transparent huge pages (a 4 KiB page fault per
// 1,024 floats cost a fifth of reading 60,000 Fashion-MNIST rows on a VM), and it grows by
// remapping its pages (mremap), never by copying what it holds as std::vector does. With a
// budget, growing beyond what the budget has left moves the floats to a spill file
// (core/data/spill.h) and appends to it; Release then maps the file, so that the floats are
// page cache, not anonymous memory.
class FloatBuffer {
 public:
  explicit FloatBuffer(SpillBudget* budget = nullptr) : budget_(budget) {}
  ~FloatBuffer();
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;

  // Appends values[0..n). Throws std::bad_alloc when the memory cannot be had, and
  // SpillError when the spill file cannot be written.
  void Append(const float* values, size_t n);

  size_t size() const { return size_; }
  bool spilled() const { return fd_ >= 0; }
  // The floats held, while not spilled (nullptr once they are).
  float* data() { return data_; }

  // Gives up the floats: the caller frees them with Free(data, bytes), where `bytes` is what
  // Release stored in *bytes. The buffer is empty after. nullptr when it never held a value.
  // A spilled buffer's floats are a private, writable mapping of its file.
  float* Release(size_t* bytes);
  static void Free(float* data, size_t bytes);

 private:
  void Grow(size_t min_floats);
  // Moves the floats held to a new spill file, and frees their memory.
  void Spill();
  void Flush();

  SpillBudget* budget_;
  float* data_ = nullptr;
  size_t size_ = 0;   // floats held
  size_t bytes_ = 0;  // bytes mapped (anonymous), or staged (spilled)
  int fd_ = -1;       // the spill file
  size_t staged_ = 0;  // floats in data_ not yet written to the file
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_FLOAT_BUFFER_H_
