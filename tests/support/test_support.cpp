#include "test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace rowprobe::test {

namespace fs = std::filesystem;

// ---- Locations --------------------------------------------------------------------------------

fs::path testdataDir() {
    if (const char* env = std::getenv("ROWPROBE_TESTDATA_DIR")) return fs::path(env);
    return fs::path(ROWPROBE_TESTDATA_DIR).lexically_normal();
}

fs::path sourceDir() { return fs::path(ROWPROBE_SOURCE_DIR); }

fs::path rowprobeBinary() {
    if (const char* env = std::getenv("ROWPROBE_BINARY")) return fs::path(env);
    return fs::path(ROWPROBE_BINARY);
}

namespace {

struct TempDirs {
    std::mutex mutex;
    std::vector<fs::path> dirs;
    ~TempDirs() {
        std::error_code ec;
        if (std::getenv("ROWPROBE_KEEP_TEMP") != nullptr) return;
        for (const auto& d : dirs) fs::remove_all(d, ec);
    }
};

TempDirs& tempDirs() {
    static TempDirs t;
    return t;
}

}  // namespace

fs::path tempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/rowprobe-test-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
    TempDirs& t = tempDirs();
    const std::lock_guard lock(t.mutex);
    t.dirs.emplace_back(pattern);
    return fs::path(pattern);
}

// ---- Processes --------------------------------------------------------------------------------

namespace {

std::vector<char*> cArgv(const std::vector<std::string>& argv) {
    std::vector<char*> out;
    out.reserve(argv.size() + 1);
    for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
    out.push_back(nullptr);
    return out;
}

int decodeStatus(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

}  // namespace

CommandResult runCommand(const std::vector<std::string>& argv, int timeoutSec) {
    CommandResult result;
    if (argv.empty()) return result;
    int outPipe[2];
    int errPipe[2];
    if (pipe(outPipe) != 0 || pipe(errPipe) != 0) {
        result.err = "pipe failed";
        return result;
    }
    std::vector<char*> args = cArgv(argv);
    const pid_t pid = fork();
    if (pid < 0) {
        result.err = "fork failed";
        return result;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(outPipe[1], STDOUT_FILENO);
        dup2(errPipe[1], STDERR_FILENO);
        close(outPipe[0]);
        close(errPipe[0]);
        close(outPipe[1]);
        close(errPipe[1]);
        const int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
        execvp(args[0], args.data());
        std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
    close(outPipe[1]);
    close(errPipe[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open = 2;
    bool timedOut = false;
    char buf[65536];
    while (open > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timedOut = true;
            break;
        }
        const int n = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
            const ssize_t r = read(fds[i].fd, buf, sizeof buf);
            if (r > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(r));
            } else if (r == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            }
        }
    }
    int status = 0;
    if (timedOut) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        result.exitCode = -1;
        result.err +=
            "\n[test_support] killed after " + std::to_string(timeoutSec) + " s timeout\n";
    } else {
        waitpid(pid, &status, 0);
        result.exitCode = decodeStatus(status);
    }
    for (auto& f : fds) {
        if (f.fd >= 0) close(f.fd);
    }
    return result;
}

CommandResult runShell(const std::string& command, int timeoutSec) {
    return runCommand({"/bin/sh", "-c", command}, timeoutSec);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv) : m_dir(tempDir()) {
    std::vector<char*> args = cArgv(argv);
    const std::string outPath = (m_dir / "stdout").string();
    const std::string errPath = (m_dir / "stderr").string();
    m_pid = fork();
    if (m_pid == 0) {
        const int out = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int devnull = open("/dev/null", O_RDONLY);
        if (out >= 0) dup2(out, STDOUT_FILENO);
        if (err >= 0) dup2(err, STDERR_FILENO);
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
        execvp(args[0], args.data());
        _exit(127);
    }
    if (m_pid < 0) throw std::runtime_error("fork failed");
}

ChildProcess::~ChildProcess() {
    if (m_pid > 0 && !m_reaped) {
        kill(m_pid, SIGKILL);
        waitpid(m_pid, &m_status, 0);
    }
}

bool ChildProcess::running() {
    if (m_reaped) return false;
    const pid_t r = waitpid(m_pid, &m_status, WNOHANG);
    if (r == m_pid) m_reaped = true;
    return !m_reaped;
}

void ChildProcess::signal(int sig) {
    if (!m_reaped) kill(m_pid, sig);
}

CommandResult ChildProcess::wait(double timeoutSec) {
    CommandResult result;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSec);
    while (running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    result.exitCode = m_reaped ? decodeStatus(m_status) : -1;
    result.out = readFile(m_dir / "stdout");
    result.err = readFile(m_dir / "stderr");
    return result;
}

// ---- Files ------------------------------------------------------------------------------------

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool gunzip(const fs::path& gz, const fs::path& dest) {
    std::error_code ec;
    if (!fs::exists(gz, ec)) return false;
    const auto gzSize = fs::file_size(gz, ec);
    const auto gzTime = fs::last_write_time(gz, ec).time_since_epoch().count();
    const std::string stamp = std::to_string(gzSize) + " " + std::to_string(gzTime) + "\n";
    const fs::path stampPath = dest.string() + ".stamp";
    if (fs::exists(dest, ec) && readFile(stampPath) == stamp) return true;
    fs::create_directories(dest.parent_path(), ec);
    // Unique temporary name + rename: parallel test processes may race to fill the cache.
    const fs::path tmp = dest.string() + ".tmp." + std::to_string(getpid());
    const CommandResult r =
        runCommand({"/bin/sh", "-c", "gzip -dc \"$0\" > \"$1\"", gz.string(), tmp.string()}, 600);
    if (r.exitCode != 0) {
        fs::remove(tmp, ec);
        return false;
    }
    fs::rename(tmp, dest, ec);
    if (ec) return false;
    std::ofstream(stampPath) << stamp;
    return true;
}

fs::path synth10kPcap() {
    const fs::path gz = testdataDir() / "bench" / "synth_10k_flows.pcap.gz";
    const fs::path dest = fs::path(ROWPROBE_BUILD_DIR) / "testdata-cache" / "synth_10k_flows.pcap";
    if (!gunzip(gz, dest)) return {};
    return dest;
}

// ---- pcap writing and frame builders ----------------------------------------------------------

PcapWriter::PcapWriter(const fs::path& path, bool nanosecond, std::uint32_t linkType)
    : m_file(std::fopen(path.c_str(), "wb")), m_nano(nanosecond) {
    if (m_file == nullptr) throw std::runtime_error("cannot create " + path.string());
    const std::uint32_t magic = nanosecond ? 0xA1B23C4DU : 0xA1B2C3D4U;
    const std::uint16_t major = 2;
    const std::uint16_t minor = 4;
    const std::uint32_t zero = 0;
    const std::uint32_t snaplen = 262144;
    std::fwrite(&magic, 4, 1, m_file);
    std::fwrite(&major, 2, 1, m_file);
    std::fwrite(&minor, 2, 1, m_file);
    std::fwrite(&zero, 4, 1, m_file);
    std::fwrite(&zero, 4, 1, m_file);
    std::fwrite(&snaplen, 4, 1, m_file);
    std::fwrite(&linkType, 4, 1, m_file);
}

PcapWriter::~PcapWriter() {
    if (m_file != nullptr) std::fclose(m_file);
}

void PcapWriter::write(std::uint64_t tsNs, const std::vector<std::uint8_t>& frame) {
    const auto sec = static_cast<std::uint32_t>(tsNs / 1'000'000'000ULL);
    const auto frac = static_cast<std::uint32_t>(m_nano ? tsNs % 1'000'000'000ULL
                                                        : (tsNs % 1'000'000'000ULL) / 1000);
    const auto len = static_cast<std::uint32_t>(frame.size());
    std::fwrite(&sec, 4, 1, m_file);
    std::fwrite(&frac, 4, 1, m_file);
    std::fwrite(&len, 4, 1, m_file);
    std::fwrite(&len, 4, 1, m_file);
    std::fwrite(frame.data(), 1, frame.size(), m_file);
}

namespace {

void put16(std::vector<std::uint8_t>& v, std::size_t at, std::uint16_t x) {
    v[at] = static_cast<std::uint8_t>(x >> 8);
    v[at + 1] = static_cast<std::uint8_t>(x & 0xFF);
}

std::vector<std::uint8_t> ethIpv4(const std::string& src, const std::string& dst,
                                  std::uint8_t proto, std::size_t l4Len) {
    std::vector<std::uint8_t> f(14 + 20 + l4Len, 0);
    const std::uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0x02};
    const std::uint8_t smac[6] = {0x02, 0, 0, 0, 0, 0x01};
    std::memcpy(f.data(), dmac, 6);
    std::memcpy(f.data() + 6, smac, 6);
    put16(f, 12, 0x0800);
    f[14] = 0x45;
    put16(f, 16, static_cast<std::uint16_t>(20 + l4Len));
    f[22] = 64;
    f[23] = proto;
    in_addr a{};
    if (inet_pton(AF_INET, src.c_str(), &a) != 1) throw std::invalid_argument("bad IPv4 " + src);
    std::memcpy(f.data() + 26, &a, 4);
    if (inet_pton(AF_INET, dst.c_str(), &a) != 1) throw std::invalid_argument("bad IPv4 " + dst);
    std::memcpy(f.data() + 30, &a, 4);
    return f;
}

}  // namespace

std::vector<std::uint8_t> ethIpv4Tcp(const std::string& src, std::uint16_t sport,
                                     const std::string& dst, std::uint16_t dport,
                                     std::uint8_t flags, std::size_t payload) {
    std::vector<std::uint8_t> f = ethIpv4(src, dst, 6, 20 + payload);
    put16(f, 34, sport);
    put16(f, 36, dport);
    f[46] = 0x50;
    f[47] = flags;
    put16(f, 48, 65535);
    return f;
}

std::vector<std::uint8_t> ethIpv4Udp(const std::string& src, std::uint16_t sport,
                                     const std::string& dst, std::uint16_t dport,
                                     std::size_t payload) {
    std::vector<std::uint8_t> f = ethIpv4(src, dst, 17, 8 + payload);
    put16(f, 34, sport);
    put16(f, 36, dport);
    put16(f, 38, static_cast<std::uint16_t>(8 + payload));
    return f;
}

// ---- JSON -------------------------------------------------------------------------------------

namespace {

class JsonReader {
public:
    explicit JsonReader(const std::string& text) : m_s(text) {}

    void document(JsonObject& out) {
        skipWs();
        value("", out);
        skipWs();
        if (m_i != m_s.size()) fail("trailing characters");
    }
    bool atEnd() {
        skipWs();
        return m_i >= m_s.size();
    }
    void valueAt(JsonObject& out) { value("", out); }
    void skipWs() {
        while (m_i < m_s.size() &&
               (m_s[m_i] == ' ' || m_s[m_i] == '\t' || m_s[m_i] == '\n' || m_s[m_i] == '\r'))
            ++m_i;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(m_i));
    }
    char peek() const { return m_i < m_s.size() ? m_s[m_i] : '\0'; }
    void expect(char c) {
        skipWs();
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++m_i;
    }

    static std::string join(const std::string& prefix, const std::string& key) {
        return prefix.empty() ? key : prefix + "." + key;
    }

    void value(const std::string& path, JsonObject& out) {
        skipWs();
        const char c = peek();
        if (c == '{') {
            ++m_i;
            skipWs();
            if (peek() == '}') {
                ++m_i;
                return;
            }
            while (true) {
                skipWs();
                const std::string key = string();
                expect(':');
                value(join(path, key), out);
                skipWs();
                if (peek() == ',') {
                    ++m_i;
                    continue;
                }
                expect('}');
                return;
            }
        }
        if (c == '[') {
            ++m_i;
            skipWs();
            if (peek() == ']') {
                ++m_i;
                return;
            }
            for (std::size_t n = 0;; ++n) {
                value(join(path, std::to_string(n)), out);
                skipWs();
                if (peek() == ',') {
                    ++m_i;
                    continue;
                }
                expect(']');
                return;
            }
        }
        if (c == '"') {
            out[path] = string();
            return;
        }
        const std::size_t start = m_i;
        while (m_i < m_s.size() && std::strchr(",}] \t\r\n", m_s[m_i]) == nullptr) ++m_i;
        if (start == m_i) fail("expected a value");
        out[path] = m_s.substr(start, m_i - start);
    }

    std::string string() {
        skipWs();
        if (peek() != '"') fail("expected a string");
        ++m_i;
        std::string r;
        while (m_i < m_s.size() && m_s[m_i] != '"') {
            char c = m_s[m_i++];
            if (c == '\\' && m_i < m_s.size()) {
                c = m_s[m_i++];
                switch (c) {
                    case 'n':
                        r += '\n';
                        break;
                    case 't':
                        r += '\t';
                        break;
                    case 'r':
                        r += '\r';
                        break;
                    case 'b':
                        r += '\b';
                        break;
                    case 'f':
                        r += '\f';
                        break;
                    case 'u': {
                        if (m_i + 4 > m_s.size()) fail("bad \\u escape");
                        const unsigned cp =
                            static_cast<unsigned>(std::stoul(m_s.substr(m_i, 4), nullptr, 16));
                        m_i += 4;
                        if (cp < 0x80) {
                            r += static_cast<char>(cp);
                        } else if (cp < 0x800) {
                            r += static_cast<char>(0xC0 | (cp >> 6));
                            r += static_cast<char>(0x80 | (cp & 0x3F));
                        } else {
                            r += static_cast<char>(0xE0 | (cp >> 12));
                            r += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                            r += static_cast<char>(0x80 | (cp & 0x3F));
                        }
                        break;
                    }
                    default:
                        r += c;
                }
            } else {
                r += c;
            }
        }
        if (m_i >= m_s.size()) fail("unterminated string");
        ++m_i;
        return r;
    }

    const std::string& m_s;
    std::size_t m_i = 0;
};

}  // namespace

std::vector<JsonObject> parseJsonLines(const std::string& text) {
    std::vector<JsonObject> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        JsonObject o;
        JsonReader(line).document(o);
        out.push_back(std::move(o));
    }
    return out;
}

JsonObject parseJsonFlat(const std::string& text) {
    JsonObject o;
    JsonReader(text).document(o);
    return o;
}

// ---- CSV and time -----------------------------------------------------------------------------

std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false;
    bool any = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
            continue;
        }
        if (c == '"') {
            quoted = true;
            any = true;
        } else if (c == ',') {
            row.push_back(std::move(field));
            field.clear();
            any = true;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            if (any || !field.empty()) {
                row.push_back(std::move(field));
                rows.push_back(std::move(row));
            }
            row.clear();
            field.clear();
            any = false;
        } else {
            field += c;
            any = true;
        }
    }
    if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
    }
    return rows;
}

namespace {

std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {  // Howard Hinnant's algorithm
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::optional<std::uint64_t> fraction(const std::string& s, std::size_t& i) {
    std::uint64_t ns = 0;
    int digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
        if (digits == 9) return std::nullopt;
        ns = ns * 10 + static_cast<std::uint64_t>(s[i] - '0');
        ++digits;
        ++i;
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 9; ++digits) ns *= 10;
    return ns;
}

}  // namespace

std::optional<std::uint64_t> parseTimeNs(const std::string& text) {
    const std::string s = text;
    if (s.size() >= 19 && s[4] == '-' && s[7] == '-' && (s[10] == 'T' || s[10] == ' ')) {
        int y = 0;
        unsigned mo = 0;
        unsigned d = 0;
        unsigned h = 0;
        unsigned mi = 0;
        unsigned se = 0;
        if (std::sscanf(s.c_str(), "%4d-%2u-%2u", &y, &mo, &d) != 3) return std::nullopt;
        if (std::sscanf(s.c_str() + 11, "%2u:%2u:%2u", &h, &mi, &se) != 3) return std::nullopt;
        std::size_t i = 19;
        std::uint64_t ns = 0;
        if (i < s.size() && s[i] == '.') {
            ++i;
            const auto f = fraction(s, i);
            if (!f) return std::nullopt;
            ns = *f;
        }
        if (i < s.size() && s[i] == 'Z') ++i;
        if (i != s.size()) return std::nullopt;
        const std::int64_t days = daysFromCivil(y, mo, d);
        const std::int64_t secs = days * 86400 + h * 3600 + mi * 60 + se;
        if (secs < 0) return std::nullopt;
        return static_cast<std::uint64_t>(secs) * 1'000'000'000ULL + ns;
    }
    std::size_t i = 0;
    std::uint64_t secs = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
        secs = secs * 10 + static_cast<std::uint64_t>(s[i] - '0');
        ++i;
    }
    if (i == 0) return std::nullopt;
    std::uint64_t ns = 0;
    if (i < s.size() && s[i] == '.') {
        ++i;
        const auto f = fraction(s, i);
        if (!f) return std::nullopt;
        ns = *f;
    }
    if (i != s.size()) return std::nullopt;
    return secs * 1'000'000'000ULL + ns;
}

// ---- YAML subset ------------------------------------------------------------------------------

const YamlNode* YamlNode::find(const std::string& key) const {
    for (const auto& [k, v] : map) {
        if (k == key) return &v;
    }
    return nullptr;
}

namespace {

struct YamlLine {
    int indent;
    std::string text;  // without indentation and comment
    int number;
};

std::string stripComment(const std::string& s) {
    char quote = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quote != 0) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
            return s.substr(0, i);
        }
    }
    return s;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

int bracketBalance(const std::string& s) {
    int depth = 0;
    char quote = 0;
    for (const char c : s) {
        if (quote != 0) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return depth;
}

class YamlParser {
public:
    explicit YamlParser(const std::string& text) {
        std::istringstream in(text);
        std::string raw;
        int number = 0;
        while (std::getline(in, raw)) {
            ++number;
            const std::string s = stripComment(raw);
            const std::string t = trim(s);
            if (t.empty() || t == "---") continue;
            const int indent = static_cast<int>(s.find_first_not_of(' '));
            // An unclosed flow collection continues on the next lines.
            if (!m_lines.empty() && bracketBalance(m_lines.back().text) > 0) {
                m_lines.back().text += " " + t;
                continue;
            }
            m_lines.push_back({indent, t, number});
        }
    }

    YamlNode parse() {
        if (m_lines.empty()) return {};
        YamlNode n = block(m_lines[0].indent);
        if (m_pos != m_lines.size()) fail(m_lines[m_pos], "unexpected indentation");
        return n;
    }

private:
    [[noreturn]] static void fail(const YamlLine& l, const std::string& what) {
        throw std::runtime_error("YAML line " + std::to_string(l.number) + ": " + what + ": " +
                                 l.text);
    }

    static std::size_t keyColon(const std::string& t) {
        char quote = 0;
        int depth = 0;
        for (std::size_t i = 0; i < t.size(); ++i) {
            const char c = t[i];
            if (quote != 0) {
                if (c == quote) quote = 0;
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '[' || c == '{') {
                ++depth;
            } else if (c == ']' || c == '}') {
                --depth;
            } else if (c == ':' && depth == 0 && (i + 1 == t.size() || t[i + 1] == ' ')) {
                return i;
            }
        }
        return std::string::npos;
    }

    YamlNode block(int indent) {
        const YamlLine& first = m_lines[m_pos];
        if (first.text.rfind("- ", 0) == 0 || first.text == "-") return list(indent);
        if (keyColon(first.text) != std::string::npos) return map(indent);
        YamlNode n = flowOrScalar(first.text, first);
        ++m_pos;
        return n;
    }

    YamlNode list(int indent) {
        YamlNode n;
        n.kind = YamlNode::Kind::List;
        while (m_pos < m_lines.size() && m_lines[m_pos].indent == indent &&
               (m_lines[m_pos].text.rfind("- ", 0) == 0 || m_lines[m_pos].text == "-")) {
            YamlLine& l = m_lines[m_pos];
            const std::string rest = trim(l.text.substr(1));
            if (rest.empty()) {
                ++m_pos;
                if (m_pos < m_lines.size() && m_lines[m_pos].indent > indent) {
                    n.list.push_back(block(m_lines[m_pos].indent));
                } else {
                    n.list.emplace_back();
                }
                continue;
            }
            // "- key: value" starts a mapping whose further keys are indented like `key`.
            const int childIndent = indent +
                                    static_cast<int>(l.text.size() - l.text.substr(1).size()) +
                                    static_cast<int>(l.text.substr(1).find_first_not_of(' '));
            l.text = rest;
            l.indent = childIndent;
            n.list.push_back(block(childIndent));
        }
        return n;
    }

    YamlNode map(int indent) {
        YamlNode n;
        n.kind = YamlNode::Kind::Map;
        while (m_pos < m_lines.size() && m_lines[m_pos].indent == indent) {
            const YamlLine& l = m_lines[m_pos];
            const std::size_t colon = keyColon(l.text);
            if (colon == std::string::npos) fail(l, "expected 'key: value'");
            const std::string key = unquote(trim(l.text.substr(0, colon)));
            const std::string rest = trim(l.text.substr(colon + 1));
            ++m_pos;
            if (rest.empty()) {
                if (m_pos < m_lines.size() && m_lines[m_pos].indent > indent) {
                    n.map.emplace_back(key, block(m_lines[m_pos].indent));
                } else if (m_pos < m_lines.size() && m_lines[m_pos].indent == indent &&
                           m_lines[m_pos].text.rfind("- ", 0) == 0) {
                    n.map.emplace_back(key, list(indent));  // "key:\n- a" at the same indent
                } else {
                    n.map.emplace_back(key, YamlNode{});
                }
                continue;
            }
            YamlNode v = flowOrScalar(rest, l);
            // A plain scalar may continue on more-indented lines.
            while (v.kind == YamlNode::Kind::Scalar && m_pos < m_lines.size() &&
                   m_lines[m_pos].indent > indent &&
                   keyColon(m_lines[m_pos].text) == std::string::npos &&
                   m_lines[m_pos].text.rfind("- ", 0) != 0) {
                v.scalar += " " + m_lines[m_pos].text;
                ++m_pos;
            }
            n.map.emplace_back(key, std::move(v));
        }
        return n;
    }

    static std::string unquote(const std::string& s) {
        if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
            return s.substr(1, s.size() - 2);
        }
        return s;
    }

    static YamlNode flowOrScalar(const std::string& text, const YamlLine& line) {
        if (text[0] != '[' && text[0] != '{' && text[0] != '"' && text[0] != '\'') {
            YamlNode n;  // a block-context plain scalar may contain ',', '[', ...
            n.kind = text == "~" || text == "null" ? YamlNode::Kind::Null : YamlNode::Kind::Scalar;
            n.scalar = text;
            return n;
        }
        std::size_t i = 0;
        YamlNode n = flowValue(text, i, line);
        while (i < text.size() && text[i] == ' ') ++i;
        if (i != text.size()) fail(line, "trailing characters");
        return n;
    }

    static YamlNode flowValue(const std::string& t, std::size_t& i, const YamlLine& line) {
        while (i < t.size() && t[i] == ' ') ++i;
        YamlNode n;
        if (i < t.size() && (t[i] == '[' || t[i] == '{')) {
            const bool isList = t[i] == '[';
            const char close = isList ? ']' : '}';
            n.kind = isList ? YamlNode::Kind::List : YamlNode::Kind::Map;
            ++i;
            while (true) {
                while (i < t.size() && t[i] == ' ') ++i;
                if (i >= t.size()) fail(line, "unterminated flow collection");
                if (t[i] == close) {
                    ++i;
                    return n;
                }
                if (isList) {
                    n.list.push_back(flowValue(t, i, line));
                } else {
                    const std::size_t colon = t.find(':', i);
                    if (colon == std::string::npos)
                        fail(line, "expected 'key: value' in a flow mapping");
                    const std::string key = unquote(trim(t.substr(i, colon - i)));
                    i = colon + 1;
                    n.map.emplace_back(key, flowValue(t, i, line));
                }
                while (i < t.size() && t[i] == ' ') ++i;
                if (i < t.size() && t[i] == ',') ++i;
            }
        }
        n.kind = YamlNode::Kind::Scalar;
        if (i < t.size() && (t[i] == '"' || t[i] == '\'')) {
            const char q = t[i];
            const std::size_t end = t.find(q, i + 1);
            if (end == std::string::npos) fail(line, "unterminated quote");
            n.scalar = t.substr(i + 1, end - i - 1);
            i = end + 1;
            return n;
        }
        const std::size_t start = i;
        int depth = 0;
        while (i < t.size()) {
            const char c = t[i];
            if (c == '[' || c == '{') ++depth;
            if ((c == ']' || c == '}') && depth-- == 0) break;
            if (c == ',' && depth == 0) break;
            ++i;
        }
        n.scalar = trim(t.substr(start, i - start));
        if (n.scalar == "~" || n.scalar == "null") n.kind = YamlNode::Kind::Null;
        return n;
    }

    std::vector<YamlLine> m_lines;
    std::size_t m_pos = 0;
};

}  // namespace

YamlNode parseYaml(const std::string& text) { return YamlParser(text).parse(); }

bool portFree(int type, std::uint16_t port) {
    const int fd = ::socket(AF_INET, type, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return free;
}

namespace {

/// The first port of the kernel's ephemeral range (ip_local_port_range), 32768 if unreadable.
std::uint16_t ephemeralLow() {
    std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
    unsigned low = 0;
    if (!(in >> low) || low <= 2048 || low > 65535) return 32768;
    return static_cast<std::uint16_t>(low);
}

}  // namespace

std::uint16_t freeLoopbackPort(int type) {
    // Below the ephemeral range: a port the kernel handed out with bind(0) goes back into the
    // pool when released, and any process's next unbound sendto() or connect() may take it
    // before the collector the test starts binds it (CI saw nfcapd exit with "Address already
    // in use" so). Ports below the range are taken only by an explicit bind. From 10000 up:
    // the tunnel and collector ports rowprobe gives meaning to (2152, 3544, 4739, 4789, 6081,
    // ...) are all lower.
    const std::uint16_t high = ephemeralLow();
    const std::uint16_t low = high > 12000 ? 10000 : 2048;
    std::mt19937 random(std::random_device{}());
    std::uniform_int_distribution<unsigned> pick(low, high - 1U);
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const auto port = static_cast<std::uint16_t>(pick(random));
        if (portFree(type, port)) return port;
    }
    throw std::runtime_error("no free port found below the ephemeral range");
}

namespace {

/// The sockets of one of /proc/net/udp{,6}, a row of whitespace-separated fields each: "sl
/// local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ref
/// pointer drops", the local address "HEXADDR:HEXPORT". The header line is skipped.
std::vector<std::vector<std::string>> procUdpRows(const char* table) {
    std::vector<std::vector<std::string>> rows;
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::vector<std::string> row;
        for (std::string field; fields >> field;) row.push_back(field);
        if (row.size() >= 13) rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace

bool udpPortBoundBy(int pid, std::uint16_t port) {
    char suffix[8];
    std::snprintf(suffix, sizeof suffix, ":%04X", static_cast<unsigned>(port));
    std::vector<std::string> inodes;
    for (const char* table : {"/proc/net/udp", "/proc/net/udp6"}) {
        for (const auto& row : procUdpRows(table)) {
            if (row[1].ends_with(suffix)) inodes.push_back("socket:[" + row[9] + "]");
        }
    }
    if (inodes.empty()) return false;
    // Without exceptions: the process may exit, and its descriptors vanish, while they are read.
    std::error_code ec;
    std::filesystem::directory_iterator fd("/proc/" + std::to_string(pid) + "/fd", ec);
    for (; !ec && fd != std::filesystem::directory_iterator(); fd.increment(ec)) {
        std::error_code linkError;
        const auto target = std::filesystem::read_symlink(fd->path(), linkError);
        if (!linkError && std::find(inodes.begin(), inodes.end(), target.string()) != inodes.end())
            return true;
    }
    return false;
}

std::uint64_t udpSocketDrops(std::uint16_t port) {
    char local[32];
    std::snprintf(local, sizeof local, "0100007F:%04X", static_cast<unsigned>(port));
    std::uint64_t drops = 0;
    for (const auto& row : procUdpRows("/proc/net/udp")) {
        if (row[1] == local) drops += std::strtoull(row.back().c_str(), nullptr, 10);
    }
    return drops;
}

}  // namespace rowprobe::test
