// The documentation names only paths that exist. Every Markdown file of the project (README.md,
// docs/**, each folder's README.md, ...) is read; outside fenced code blocks, every relative link
// target and every backticked span that looks like a repository path must name a file or folder
// of the source tree:
//   * `core/cli.cpp`, `tests/golden/`: a path whose first part is a top-level folder, from the
//     repository root (or from the document's folder);
//   * `rowprobe/process.hpp`: an SDK include path, under plugins/include/;
//   * `flow_table.hpp`, `tls_parser_test.cpp`: a bare source or doc file name, in the
//     document's folder or anywhere in the tree (a file that was renamed or deleted fails);
//     names with a '-' or other extensions are other projects' files (`cesnet.xml`);
//   * spans with placeholders (`process/NAME/`, `<name>`, `*`, `...`) and generated paths
//     (`build/...`) are not paths. A `:123` line suffix and a `#anchor` are ignored.
// A second test keeps the design inside the repository: no file refers to the design notes of
// the shared folder next to the checkout, which a user's clone does not have.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.hpp"

namespace rowprobe::core {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 12> kTopLevel = {"core",    "plugins",   "input", "storage",
                                                        "process", "output",    "tests", "tools",
                                                        "scripts", "packaging", "pcaps", "docs"};
// A bare file name is checked when it has one of these extensions and no '-' (rowprobe's
// sources are snake_case; `ipfix-elements.hpp` or `cesnet.xml` name other projects' files).
constexpr std::array<std::string_view, 7> kFileExtensions = {".hpp", ".cpp", ".h",    ".md",
                                                             ".sh",  ".py",  ".cmake"};

bool skippedDirectory(const fs::path& p) {
    const std::string name = p.filename().string();
    return name.starts_with('.') || name.starts_with("build") || name == "corpus";
}

struct Tree {
    std::vector<fs::path> markdown;
    std::set<std::string> basenames;
    std::vector<fs::path> textFiles;
};

Tree scanTree(const fs::path& root) {
    Tree t;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        if (it->is_directory()) {
            if (skippedDirectory(it->path())) it.disable_recursion_pending();
            continue;
        }
        if (!it->is_regular_file()) continue;
        const fs::path& p = it->path();
        t.basenames.insert(p.filename().string());
        const std::string ext = p.extension().string();
        if (ext == ".md") t.markdown.push_back(p);
        if (ext == ".md" || ext == ".hpp" || ext == ".cpp" || ext == ".sh" || ext == ".py" ||
            ext == ".txt" || p.filename() == ".clang-format" || p.filename() == ".clang-tidy")
            t.textFiles.push_back(p);
    }
    return t;
}

bool hasPathCharactersOnly(std::string_view s) {
    for (const char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/' ||
                        c == '+';
        if (!ok) return false;
    }
    return !s.empty();
}

bool isPlaceholder(std::string_view s) {
    return s.find("NAME") != std::string_view::npos || s.find("...") != std::string_view::npos ||
           s.find("XXX") != std::string_view::npos;
}

// The path a backticked span names, or empty when the span is not a repository path.
std::string pathOfSpan(std::string span) {
    if (const auto colon = span.find(':'); colon != std::string::npos) {
        const std::string rest = span.substr(colon + 1);
        if (rest.empty() || rest.find_first_not_of("0123456789-") != std::string::npos) return {};
        span.resize(colon);  // `core/cli.cpp:120`
    }
    if (!hasPathCharactersOnly(span) || isPlaceholder(span)) return {};
    if (span.starts_with("../") || span.starts_with("./") || span.starts_with("/")) return {};
    const auto slash = span.find('/');
    if (slash == std::string::npos) {
        if (span.find('-') != std::string::npos) return {};
        for (const std::string_view ext : kFileExtensions)
            if (span.ends_with(ext) && span.size() > ext.size()) return span;
        return {};
    }
    const std::string_view first = std::string_view(span).substr(0, slash);
    if (first == "rowprobe") return "plugins/include/" + span;
    for (const std::string_view top : kTopLevel)
        if (first == top) return span;
    return {};
}

struct Missing {
    std::string where;
    std::string what;
};

bool exists(const fs::path& root, const fs::path& docDir, const std::string& path,
            const Tree& tree) {
    if (path.find('/') == std::string::npos)
        return fs::exists(docDir / path) || tree.basenames.contains(path);
    return fs::exists(root / path) || fs::exists(docDir / path);
}

std::vector<Missing> checkDocument(const fs::path& root, const fs::path& doc, const Tree& tree) {
    std::vector<Missing> missing;
    std::ifstream in(doc);
    std::string line;
    bool fenced = false;
    int lineNo = 0;
    const std::string where = fs::relative(doc, root).string();
    while (std::getline(in, line)) {
        ++lineNo;
        const auto firstChar = line.find_first_not_of(" \t");
        if (firstChar != std::string::npos && line.compare(firstChar, 3, "```") == 0) {
            fenced = !fenced;
            continue;
        }
        if (fenced) continue;
        // Backticked spans.
        for (std::size_t open = line.find('`'); open != std::string::npos;) {
            const std::size_t close = line.find('`', open + 1);
            if (close == std::string::npos) break;
            const std::string path = pathOfSpan(line.substr(open + 1, close - open - 1));
            if (!path.empty() && !exists(root, doc.parent_path(), path, tree))
                missing.push_back({where + ":" + std::to_string(lineNo), "`" + path + "`"});
            open = line.find('`', close + 1);
        }
        // Link targets: [text](target).
        for (std::size_t at = line.find("]("); at != std::string::npos;
             at = line.find("](", at + 2)) {
            const std::size_t end = line.find(')', at + 2);
            if (end == std::string::npos) break;
            std::string target = line.substr(at + 2, end - at - 2);
            if (const auto hash = target.find('#'); hash != std::string::npos) target.resize(hash);
            if (target.empty() || target.find("://") != std::string::npos ||
                target.starts_with("mailto:") || !hasPathCharactersOnly(target) ||
                target.starts_with("../../../"))
                continue;
            if (!fs::exists(doc.parent_path() / target))
                missing.push_back({where + ":" + std::to_string(lineNo), "(" + target + ")"});
        }
    }
    return missing;
}

TEST(DocPaths, EveryRepositoryPathTheDocsNameExists) {
    const fs::path root = test::sourceDir();
    const Tree tree = scanTree(root);
    ASSERT_GT(tree.markdown.size(), 20U) << "expected the project's Markdown files under " << root;
    std::vector<Missing> missing;
    for (const fs::path& doc : tree.markdown) {
        const auto m = checkDocument(root, doc, tree);
        missing.insert(missing.end(), m.begin(), m.end());
    }
    std::ostringstream report;
    for (const Missing& m : missing) report << "  " << m.where << ": " << m.what << "\n";
    EXPECT_TRUE(missing.empty()) << missing.size() << " paths named in the docs do not exist:\n"
                                 << report.str();
}

TEST(DocPaths, TheCheckerRecognisesPathsAndPlaceholders) {
    EXPECT_EQ(pathOfSpan("storage/cache/row.hpp"), "storage/cache/row.hpp");
    EXPECT_EQ(pathOfSpan("core/cli.cpp:120"), "core/cli.cpp");
    EXPECT_EQ(pathOfSpan("rowprobe/process.hpp"), "plugins/include/rowprobe/process.hpp");
    EXPECT_EQ(pathOfSpan("tls_digest_test.cpp"), "tls_digest_test.cpp");
    EXPECT_EQ(pathOfSpan("process/NAME/README.md"), "");
    EXPECT_EQ(pathOfSpan("-p 'pstats'"), "");
    EXPECT_EQ(pathOfSpan("ipfix;host=x"), "");
    EXPECT_EQ(pathOfSpan("build/release/core/rowprobe"), "");
    EXPECT_EQ(pathOfSpan("std::span"), "");
    EXPECT_EQ(pathOfSpan("x.pcap"), "");
    EXPECT_EQ(pathOfSpan("ipfix-elements.hpp"), "");
    EXPECT_EQ(pathOfSpan("cesnet.xml"), "");

    const fs::path root = test::sourceDir();
    const Tree tree = scanTree(root);
    EXPECT_TRUE(exists(root, root / "docs", "storage/cache/row.hpp", tree));
    EXPECT_TRUE(exists(root, root / "docs", "flow_table.hpp", tree));
    EXPECT_FALSE(exists(root, root / "docs", "storage/cache/no_such_file.hpp", tree));
    EXPECT_FALSE(exists(root, root / "docs", "mapped_pcap.cpp", tree));
}

TEST(DocPaths, NoFileRefersToTheDesignOutsideTheRepository) {
    const fs::path root = test::sourceDir();
    const Tree tree = scanTree(root);
    const std::string needle = std::string("shared/") + "design";
    std::ostringstream report;
    int found = 0;
    for (const fs::path& file : tree.textFiles) {
        std::ifstream in(file);
        std::string line;
        int lineNo = 0;
        while (std::getline(in, line)) {
            ++lineNo;
            if (line.find(needle) == std::string::npos) continue;
            ++found;
            report << "  " << fs::relative(file, root).string() << ":" << lineNo << ": " << line
                   << "\n";
        }
    }
    EXPECT_EQ(found, 0) << "the design lives in docs/ (architecture.md, design/, style.md); "
                           "these lines point outside the repository:\n"
                        << report.str();
}

// Every plugin folder (style.md: its options, fields and differences from ipfixprobe) and every
// tool folder (README.md and architecture.md promise it) has a README.
TEST(DocPaths, EveryPluginAndToolFolderHasAReadme) {
    const fs::path root = test::sourceDir();
    std::size_t folders = 0;
    for (const char* family : {"input", "storage", "process", "output", "tools"}) {
        for (const fs::directory_entry& d : fs::directory_iterator(root / family)) {
            if (!d.is_directory()) continue;
            ++folders;
            EXPECT_TRUE(fs::exists(d.path() / "README.md"))
                << fs::relative(d.path(), root).string() << "/ has no README.md";
        }
    }
    EXPECT_GT(folders, 40U);
}

}  // namespace
}  // namespace rowprobe::core
