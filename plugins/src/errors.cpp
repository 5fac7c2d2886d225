#include "rowprobe/errors.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

#include "rowprobe/secrets.hpp"

namespace rowprobe {

namespace {
std::string joinChoices(const std::vector<std::string>& choices) {
    std::vector<std::string> sorted = choices;
    std::sort(sorted.begin(), sorted.end());
    std::string out;
    for (const auto& c : sorted) {
        if (!out.empty()) out += ", ";
        out += c;
    }
    return out;
}

std::string headline(const ConfigError::Details& d) {
    std::string s = d.component;
    if (!d.option.empty()) s += ": option '" + d.option + "'";
    if (!d.problem.empty()) s += (s.empty() ? "" : ": ") + d.problem;
    return s;
}
}  // namespace

ConfigError::ConfigError(Details d)
    : std::runtime_error(maskSecrets(headline(d))), m_details(std::move(d)) {}

bool isSecretProperty(std::string_view name) noexcept {
    return name.find("password") != std::string_view::npos ||
           name.find("secret") != std::string_view::npos || name == "ssl.key.pem" ||
           name == "sasl.oauthbearer.config";
}

std::string maskSecrets(std::string text) {
    auto delimiter = [](char c) { return c == ';' || c == ',' || c == '"'; };
    for (std::size_t eq = text.find('='); eq != std::string::npos; eq = text.find('=', eq + 1)) {
        std::size_t start = eq;
        while (start > 0 && !delimiter(text[start - 1]) && text[start - 1] != ' ' &&
               text[start - 1] != '\t' && text[start - 1] != '=')
            --start;
        if (!isSecretProperty(std::string_view(text).substr(start, eq - start))) continue;
        std::size_t end = eq + 1;
        while (end < text.size() && !delimiter(text[end]) && text[end] != '\n') text[end++] = '*';
        eq = end > eq ? end - 1 : eq;
    }
    return text;
}

std::string ConfigError::render() const {
    const Details& d = m_details;
    std::ostringstream out;
    out << headline(d) << '\n';
    if (!d.source.empty()) {
        // A huge source (a 10 MB line) is shown as a window around the column, and the caret
        // line is as bounded: the message stays a few lines whatever the input.
        constexpr std::size_t kShown = 160;
        const bool marked = d.column != std::string::npos && d.column <= d.source.size();
        std::size_t from = 0;
        if (d.source.size() > kShown && marked && d.column > kShown / 2)
            from = std::min(d.column - kShown / 2, d.source.size() - kShown);
        const std::string_view shown = std::string_view(d.source).substr(from, kShown);
        const std::string before = from != 0 ? "..." : "";
        const std::string after = from + shown.size() < d.source.size() ? "..." : "";
        const std::string prefix =
            "    " + (d.flag.empty() ? std::string() : d.flag + " ") + "\"" + before;
        out << prefix << shown << after << "\"\n";
        if (marked) {
            const std::size_t at = d.column - from;
            const std::size_t width =
                std::min(std::max<std::size_t>(1, d.value.size()), shown.size() + 1 - at);
            out << std::string(prefix.size() + at, ' ') << '^'
                << std::string(width > 0 ? width - 1 : 0, '~') << '\n';
        }
    }
    if (!d.choices.empty()) {
        out << "    available: " << joinChoices(d.choices);
        const std::string guess = closestMatch(d.value, d.choices);
        if (!guess.empty()) out << "   (did you mean '" << guess << "'?)";
        out << '\n';
    }
    if (!d.help.empty()) out << "    help: " << d.help << '\n';
    std::string s = maskSecrets(out.str());
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
    // Optimal string alignment: insertions, deletions, substitutions and transpositions of
    // neighbours ("lur" -> "lru" is one edit), the usual typos in option names.
    const std::size_t w = b.size() + 1;
    std::vector<std::size_t> d((a.size() + 1) * w);
    for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            std::size_t best = std::min(
                {d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                best = std::min(best, d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = best;
        }
    }
    return d[a.size() * w + b.size()];
}

std::string closestMatch(std::string_view word, const std::vector<std::string>& candidates) {
    if (word.empty()) return {};
    const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
    std::string best;
    std::size_t bestDistance = limit + 1;
    for (const auto& c : candidates) {
        const std::size_t d = editDistance(word, c);
        if (d < bestDistance || (d == bestDistance && c < best)) {
            best = c;
            bestDistance = d;
        }
    }
    return bestDistance <= limit ? best : std::string();
}

}  // namespace rowprobe
