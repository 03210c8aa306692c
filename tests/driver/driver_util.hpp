// Helpers of the driver tests: run the built `kiln` binary as a user would (through the shell),
// capturing stdout, stderr and the exit status, in a temp folder of its own per test.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::driver_test {

namespace fs = std::filesystem;

inline const std::string data_dir = KILN_TEST_DATA_DIR "/driver/data/";

struct result {
    int status = -1;
    std::string out, err;
};

inline std::string read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

class driver_fixture : public ::testing::Test {
protected:
    fs::path tmp;

    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        tmp = fs::temp_directory_path() /
              ("kiln_driver_" + std::to_string(getpid()) + "_" + info->test_suite_name() + "_" + info->name());
        fs::create_directories(tmp);
    }
    void TearDown() override { fs::remove_all(tmp); }

    // Runs `kiln ARGS` (a shell word list), capturing stdout, stderr and the exit status.
    result kiln(const std::string& args) const {
        fs::path err_file = tmp / "stderr.txt";
        std::string cmd = std::string(KILN_BINARY) + " " + args + " 2>" + err_file.string();
        result r;
        FILE* p = popen(cmd.c_str(), "r");
        if (!p) return r;
        char buf[4096];
        std::size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
        int st = pclose(p);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        r.err = read_file(err_file);
        return r;
    }

    // Writes the MLP demo into the temp dir; returns numpy's output for --fill1 ("" if no numpy).
    std::string make_mlp() const {
        std::string cmd = "/usr/bin/python3 " KILN_TEST_DATA_DIR "/../scripts/make_mnist_mlp.py " +
                          (tmp / "mlp.kir").string() + " --expect-fill1 2>/dev/null";
        std::string out;
        FILE* p = popen(cmd.c_str(), "r");
        char buf[4096];
        std::size_t n;
        while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        if (!p || pclose(p) != 0) return "";
        return out;
    }
};

inline std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> r;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) r.push_back(l);
    return r;
}

// "{0.1, 2, ...}" -> numbers (the "..." left out).
inline std::vector<double> parse_values(const std::string& s) {
    std::vector<double> r;
    auto open = s.find('{'), close = s.find('}');
    std::istringstream in(s.substr(open + 1, close - open - 1));
    for (std::string w; std::getline(in, w, ',');)
        if (w != " ...") r.push_back(std::stod(w));
    return r;
}

// The line after "NAME: ..." in kiln run's output: that output's values.
inline std::string values_after(const std::string& out, const std::string& name) {
    auto ls = lines(out);
    for (std::size_t i = 0; i + 1 < ls.size(); ++i)
        if (ls[i].rfind(name + ": ", 0) == 0) return ls[i + 1];
    return "";
}

}  // namespace kiln::driver_test
