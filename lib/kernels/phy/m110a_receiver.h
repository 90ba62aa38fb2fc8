/* MIL-STD-188-110A/B serial-tone receiver: complex baseband at 9600 Hz (from
 * serial_tone_frontend) to decoded bursts.
 *
 * Stages:
 *   1. Search: the first 288 symbols of every preamble segment are the same for every
 *      mode. A differential correlation against them (z[n] z*[n - 1 symbol] against the
 *      known symbol-to-symbol rotations) does not care about the carrier offset; its
 *      sums over up to three consecutive segments are added coherently (their phase is
 *      the offset's rotation per symbol, the same in each) and compared, as a z-score
 *      against the noise (|C| / sqrt(sum |p|^2)), with a threshold (5.5 by default: on
 *      noise alone about one false start in 10^7 s). The angle of the sum gives the
 *      coarse offset (+-1200 Hz range).
 *   2. Preamble: a fine offset from the phase slope over the known 32-symbol channel
 *      symbols; D1, D2 and the count C1 C2 C3 by coherent 8-ary Walsh correlation; an
 *      unknown D1/D2 or a count out of range drops the detection and the search goes on.
 *   3. Data: a decision feedback equaliser (T/2-spaced feed-forward, symbol-spaced
 *      feedback, recursive least squares) trained on every known symbol (the rest of the
 *      preamble, then the probes) and decision-directed on data symbols, with a
 *      second-order phase loop; soft demapping (max-log LLRs scaled by the noise
 *      measured on the probes); the 75 bps mode correlates each 32-chip Walsh symbol
 *      against its four patterns instead (equaliser frozen after the preamble);
 *      deinterleaving, repetition combining, streaming Viterbi, and the bit stream
 *      searched for the EOM.
 *      Symbol timing follows a sample-rate offset: when the feed-forward taps' energy
 *      centre moves a tap off the middle, the window moves two samples after it.
 *   4. The burst ends at the EOM; or cut when the signal is lost (13 dB weaker than
 *      at its preamble for an interleaver block, or the probes no longer matching for
 *      three), when a new preamble appears (the search keeps running during data), or
 *      at max_burst_s; it is reported with mode, offset, SNR and whether the EOM was
 *      found.
 * Bad input (noise, partial bursts, corrupt mode codes) only ever sends it back to
 * searching. */
#ifndef HFSTACK_KERNELS_PHY_M110A_RECEIVER_H
#define HFSTACK_KERNELS_PHY_M110A_RECEIVER_H

#include "conv_k7.h"
#include "m110a_waveform.h"

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace hfstack {
namespace phy {

struct m110a_receiver_config {
    double detection_threshold = 5.5; // z-score of the preamble correlation
    unsigned feedforward_taps = 17;   // T/2 spaced, centred on the symbol
    unsigned feedback_taps = 16;      // symbol spaced
    double forgetting = 0.995;        // RLS forgetting factor (memory ~ 1 / (1 - it) symbols)
    bool msb_first = false;           // byte bit order (see m110a_transmitter.h)
    double max_burst_s = 3600;        // a burst longer than this is cut
};

struct m110a_burst {
    std::string mode;                 // "2400S", ...
    uint64_t start_sample = 0;        // 9600 Hz baseband sample of the detected segment
    double frequency_offset_hz = 0;
    double snr_db = 0;                // measured on the known symbols, in 3 kHz
    std::vector<uint8_t> bytes;       // user bytes (before the EOM)
    bool eom = false;                 // false: the burst was cut; bytes may be bad
};

class m110a_receiver
{
public:
    static constexpr unsigned samples_per_symbol = 4; // 9600 Hz at 2400 Bd

    explicit m110a_receiver(const m110a_receiver_config& config = {});
    ~m110a_receiver();
    m110a_receiver(const m110a_receiver&) = delete;
    m110a_receiver& operator=(const m110a_receiver&) = delete;

    // Feeds n baseband samples; bursts that end here are appended to `done`.
    void process(const std::complex<float>* x, size_t n, std::vector<m110a_burst>& done);
    // True from a detection until its burst ends.
    bool carrier_detected() const;
    // Samples consumed so far.
    uint64_t samples() const;

private:
    struct state;
    std::unique_ptr<state> d;
};

} // namespace phy
} // namespace hfstack
} // namespace gr

#endif
