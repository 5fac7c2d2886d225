// The "classify" process plugin: the direction-signed payload sizes of a flow's first N packets
// with payload go through a statistical model loaded at start-up (`model=FILE`, see
// classify_model.hpp) and become a label and a score. Per flow: a 16-bit tier-1 word (count
// and directions, then the label and the score), and a tier-2 record for the sizes until the
// N-th packet with payload. The flow is labelled on its N-th packet with payload, which
// returns kDone (no more per-packet work); a flow that ends earlier is labelled at export with
// what it has, or `unknown` when the model's minimum says so.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "process/classify/classify_model.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::classify {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "model",
     .shortName = "m",
     .type = OptionType::String,
     .help = "model file written by rowprobe-train",
     .required = true},
    {.name = "packets",
     .shortName = "n",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "packets with payload the model must use (0: whatever the model says; else a "
             "model with another N is refused)",
     .min = 0,
     .max = kMaxPackets},
    {.name = "pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "IPFIX: export the fields as elements 1 (label), 2 (score), 3 (packets) of this "
             "Private Enterprise Number, your organisation's (0: not in IPFIX)",
     .min = 0,
     .max = 4294967295.0},
};

struct Fields {
    VarRef label;
    float score;
    std::uint8_t packets;
};

constexpr std::array<FieldSpec, 3> fieldSpecs(std::uint32_t pen) {
    const bool ipfix = pen != 0;
    return {{
        {.name = "classify_label",
         .description = "class given by the model, or 'unknown'",
         .type = FieldType::String,
         .origin = FieldOrigin::Plugin,
         .offset = offsetof(Fields, label),
         .ipfix = {ipfix ? pen : kPenIana, static_cast<std::uint16_t>(ipfix ? 1 : 0), kIpfixVarLen},
         .unirec = {"CLASSIFY_LABEL", "string"},
         .hint = FieldHint::Text},
        {.name = "classify_score",
         .description = "the model's confidence in the label, in [0, 1] (0 for unknown)",
         .type = FieldType::Float32,
         .origin = FieldOrigin::Plugin,
         .offset = offsetof(Fields, score),
         .ipfix = {ipfix ? pen : kPenIana, static_cast<std::uint16_t>(ipfix ? 2 : 0), 4},
         .unirec = {"CLASSIFY_SCORE", "float"}},
        {.name = "classify_packets",
         .description = "packets with payload the label was computed from",
         .type = FieldType::Unsigned8,
         .origin = FieldOrigin::Plugin,
         .offset = offsetof(Fields, packets),
         .ipfix = {ipfix ? pen : kPenIana, static_cast<std::uint16_t>(ipfix ? 3 : 0), 1},
         .unirec = {"CLASSIFY_PACKETS", "uint8"}},
    }};
}

class Classify final : public ProcessPluginBase<Classify> {
public:
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    /// Tier 1, one 16-bit word, so that the table keeps it inside the flow's own record
    /// (CachedFlow's inline state, when classify is the first plugin with a state that small):
    ///   bit 15 = 0, collecting: bits 0-3 packets with payload so far, bits 4-11 their
    ///                directions (bit 4+i set = the i-th came from the responder)
    ///   bit 15 = 1, labelled:   bits 7-14 the class (K = unknown), bits 0-6 the score x 127
    struct State {
        std::uint16_t word;
    };
    /// Tier 2, only while collecting: the sizes. Given back to the pool on the N-th packet, so
    /// a labelled flow holds no record and its export touches nothing but its own.
    struct Ext {
        std::array<std::uint16_t, kMaxPackets> size;
    };
    static_assert(sizeof(State) == 2 && sizeof(Ext) <= 64);
    static_assert(kMaxClasses <= 255, "the class and unknown fit in 8 bits");
    /// The sizes are written before they are read.
    static constexpr bool kZeroExt = false;
    static constexpr std::uint16_t kLabelled = 0x8000;
    static constexpr float kScoreSteps = 127.0F;

    explicit Classify(const Options& options)
        : m_model(std::make_shared<Model>()),
          m_fields(fieldSpecs(static_cast<std::uint32_t>(options.getInt("pen")))) {
        const std::string path = options.getString("model");
        std::string error;
        if (!loadModelFile(path, *m_model, error))
            options.fail("model", "model file '" + path + "': " + error);
        const auto want = static_cast<std::size_t>(options.getInt("packets"));
        if (want != 0 && want != m_model->packets()) {
            options.fail("packets", "N mismatch: model file '" + path + "' was trained on " +
                                        std::to_string(m_model->packets()) +
                                        " packets, packets=" + std::to_string(want));
        }
        m_n = m_model->packets();
    }

    std::string_view name() const noexcept override { return "classify"; }
    std::span<const FieldSpec> fields() const noexcept override { return m_fields; }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.attachExt<Ext>();
        if (e == nullptr) return kDone;  // pool exhausted: exported without classify fields
        return add(ctx, *e);
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return kDone;
        return add(ctx, *e);
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const std::uint16_t w = ctx.stateAs<State>().word;
        std::uint16_t cls = 0;
        float score = 0;
        std::uint8_t packets = 0;
        if ((w & kLabelled) != 0) {
            cls = static_cast<std::uint16_t>((w >> 7U) & 0xFFU);
            score = static_cast<float>(w & 0x7FU) / kScoreSteps;
            packets = static_cast<std::uint8_t>(m_n);
        } else {
            // A flow that ended before its N-th packet with payload: labelled now.
            const Ext* e = ctx.ext<Ext>();
            if (e == nullptr) return;
            const std::uint16_t q = quantised(m_model->predict(features(w, *e)), cls);
            score = static_cast<float>(q) / kScoreSteps;
            packets = static_cast<std::uint8_t>(w & 0xFU);
        }
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->label = out.appendString(m_model->label(cls));
        f->score = score;
        f->packets = packets;
        out.commit();
    }

    /// What the next packet touches: its size entry (and on the N-th the sizes before it), in
    /// the record's one line, fetched for writing rather than loaded, so that the batch does
    /// not wait for a miss (pstats' way).
    std::uint64_t touch(const State& st, const Ext& e) const noexcept {
        __builtin_prefetch(&e, 1, 3);
        return st.word;
    }

private:
    HookResult add(FlowContext& ctx, Ext& e) const noexcept {
        std::uint16_t& w = ctx.stateAs<State>().word;
        const std::uint32_t len = ctx.packet->payloadWireLen;
        const std::uint32_t count = w & 0xFU;
        if (len == 0) return kContinue;
        e.size[count] = static_cast<std::uint16_t>(len > 65535U ? 65535U : len);
        if (!ctx.forward) w = static_cast<std::uint16_t>(w | (1U << (4 + count)));
        ++w;  // the count, in bits 0-3
        if (count + 1 < m_n) return kContinue;
        std::uint16_t cls = 0;
        const std::uint16_t q = quantised(m_model->predict(features(w, e)), cls);
        w = static_cast<std::uint16_t>(kLabelled | (cls << 7U) | q);
        ctx.detachExt();  // the record goes back to the pool now
        return kDone;
    }

    static Features features(std::uint16_t w, const Ext& e) noexcept {
        Features f;
        f.count = static_cast<std::uint8_t>(w & 0xFU);
        for (std::size_t i = 0; i < f.count; ++i) {
            const auto s = static_cast<std::int32_t>(e.size[i]);
            f.size[i] = ((w >> (4 + i)) & 1U) != 0 ? -s : s;
        }
        return f;
    }

    /// The score in 1/127 steps (what the plugin exports), the class into `cls`.
    static std::uint16_t quantised(const Prediction& p, std::uint16_t& cls) noexcept {
        cls = p.cls;
        return static_cast<std::uint16_t>(std::lround(p.score * kScoreSteps)) & 0x7FU;
    }

    std::shared_ptr<Model> m_model;
    std::array<FieldSpec, 3> m_fields;
    std::size_t m_n = 0;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, Classify,
                         {.name = "classify",
                          .summary = "label and score of each flow from the sizes of its first "
                                     "packets, by a naive Bayes or decision-tree model file",
                          .options = kOptions});

}  // namespace rowprobe::classify
