#ifndef SPARKTORCH_CORE_NET_RANDOM_HEX_H_
#define SPARKTORCH_CORE_NET_RANDOM_HEX_H_

#include <cstddef>
#include <string>

namespace sparktorch {

// `bytes` random bytes from the kernel, as lower-case hex (2 characters a byte): the nonces of
// the tracker's and the parameter server's handshakes, and the secret of a job's own tracker.
// Any thread may call it.
std::string RandomHex(size_t bytes);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_NET_RANDOM_HEX_H_
