/* PDU metadata keys used across gr-hfstack, defined once. */
#ifndef INCLUDED_HFSTACK_METADATA_H
#define INCLUDED_HFSTACK_METADATA_H

#include <pmt/pmt.h>

namespace gr {
namespace hfstack {
namespace metadata {

// SIS connection a primitive belongs to (integer).
inline const pmt::pmt_t& client_id()
{
    static const pmt::pmt_t key = pmt::mp("client_id");
    return key;
}
// SIS direction: true for bytes from the client to the node.
inline const pmt::pmt_t& from_client()
{
    static const pmt::pmt_t key = pmt::mp("from_client");
    return key;
}
// Time of a PDU in seconds since the Unix epoch (double).
inline const pmt::pmt_t& time()
{
    static const pmt::pmt_t key = pmt::mp("time");
    return key;
}

} // namespace metadata
} // namespace hfstack
} // namespace gr

#endif
