// The "classify" process plugin: the direction-signed payload sizes of a flow's first N packets
// with payload go through a statistical model loaded at start-up (`model=FILE`, see
// classify_model.hpp) and become a label and a score. Per flow: 2 bytes of tier 1 (count and
// directions, inside the flow's record) and a 64-byte tier-2 record (sizes, label, score). The flow is labelled on its N-th packet with payload, which
// returns kDone (no more per-packet work); a flow that ends earlier is labelled at export with
// what it has, or `unknown` when the model's minimum says so.
#include <array>
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
    /// Tier 1, 2 bytes, so the table keeps it inside the flow's record (CachedFlow's inline
    /// state, when classify is the first plugin with such a small state) and a packet of a flow
    /// classify is done with touches nothing else: packets with payload recorded so far, and
    /// their directions (bit i set = the i-th came from the responder).
    struct State {
        std::uint8_t count;
        std::uint8_t dirs;
    };
    /// Tier 2, one line: the sizes, then the label (class + 1; 0 = not labelled yet) and score.
    struct Ext {
        std::array<std::uint16_t, kMaxPackets> size;
        std::uint16_t label;
        float score;
    };
    static_assert(sizeof(State) == 2 && sizeof(Ext) <= 64);
    /// postCreate sets the label; the sizes are written before they are read.
    static constexpr bool kZeroExt = false;

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
        e->label = 0;
        return add(ctx, *e);
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return kDone;
        return add(ctx, *e);
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return;
        const State& st = ctx.stateAs<State>();
        if (e->label == 0) label(st, *e);
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        f->label = out.appendString(m_model->label(static_cast<std::uint16_t>(e->label - 1)));
        f->score = e->score;
        f->packets = st.count;
        out.commit();
    }

private:
    HookResult add(FlowContext& ctx, Ext& e) const noexcept {
        State& st = ctx.stateAs<State>();
        const std::uint32_t len = ctx.packet->payloadWireLen;
        if (len == 0 || st.count >= m_n) return kContinue;
        e.size[st.count] = static_cast<std::uint16_t>(len > 65535U ? 65535U : len);
        if (!ctx.forward) st.dirs = static_cast<std::uint8_t>(st.dirs | (1U << st.count));
        ++st.count;
        if (st.count < m_n) return kContinue;
        label(st, e);
        return kDone;
    }

    void label(const State& st, Ext& e) const noexcept {
        Features f;
        f.count = st.count;
        for (std::size_t i = 0; i < st.count; ++i) {
            const auto s = static_cast<std::int32_t>(e.size[i]);
            f.size[i] = ((st.dirs >> i) & 1U) != 0 ? -s : s;
        }
        const Prediction p = m_model->predict(f);
        e.label = static_cast<std::uint16_t>(p.cls + 1);
        e.score = p.score;
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
