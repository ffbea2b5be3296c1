/* sites.cpp (CPU mode) — the source place of each memory-access site the bank and sector
 * counter sees (banks.cpp): addr2line (binutils) asked once per object for the sites not yet
 * known, the place a table shows ("08/scan.cu:274"), and the canonical site that groups the
 * copies the compiler made of one access. Internal to the runtime (sites.h). */
#include "sites.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <elf.h>
#include <map>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lab_cpu {
namespace sites {

namespace {

/* What addr2line says of each site (an instruction): its place to show, "file:line", and its
 * canonical site, the first site seen at the same place (the same inline chain of lines). The
 * compiler may copy one access into several instructions (a store duplicated into both arms of
 * an if-conversion, say); lanes that ran different copies made one access on a GPU, so records
 * are grouped by canonical site. A site addr2line cannot place is its own canonical site. */
struct site_info {
    const void *canon;
    std::string where;
    /* the function of the place shown, its name only ("scan_tile"), "" when unknown */
    std::string func;
};
std::unordered_map<const void *, site_info> g_sites;
std::map<std::string, const void *> g_by_chain;

/* Whether a source file is CPU mode's own (common/cpu/): an access there is made for the code
 * that called it (a vector type's copy), which is the line to show. */
bool cpu_mode_file(const std::string &file)
{
    return file.find("common/cpu/") != std::string::npos ||
           (file.size() >= 9 && file.compare(file.size() - 9, 9, "lab_cpu.h") == 0);
}

/* "file:line" of addr2line's "/path/to/08_decoupled_lookback/scan.cu:274" as a table shows it: the
 * file's name, after its lab's number when the file is in a lab's folder ("08/scan.cu:274"), so
 * that lab 10's run, which runs the student's labs 07 and 08 too, names whose line it is. */
std::string shown_place(const std::string &place)
{
    const size_t slash = place.rfind('/');
    if (slash == std::string::npos)
        return place;
    const size_t up = slash == 0 ? std::string::npos : place.rfind('/', slash - 1);
    const std::string dir = place.substr(up == std::string::npos ? 0 : up + 1,
                                         slash - (up == std::string::npos ? 0 : up + 1));
    const bool lab = dir.size() > 3 && isdigit((unsigned char)dir[0]) &&
                     isdigit((unsigned char)dir[1]) && dir[2] == '_';
    return (lab ? dir.substr(0, 2) + "/" : std::string()) + place.substr(slash + 1);
}

/* The bare name of a function as addr2line -C prints it: "void scan_tile<true>(int const*, ...)"
 * and "lab::load_tile(...)" are "scan_tile" and "load_tile"; "" for "??". */
std::string bare_name(const std::string &func)
{
    std::string f = func;
    for (size_t at; (at = f.find("(anonymous namespace)")) != std::string::npos;)
        f.replace(at, 21, "anonymous");
    f = f.substr(0, f.find('('));
    while (!f.empty() && f.back() == '>') { /* drop the template arguments, nested ones too */
        int depth = 0;
        size_t i = f.size();
        while (i-- > 0) {
            depth += f[i] == '>' ? 1 : f[i] == '<' ? -1 : 0;
            if (depth == 0)
                break;
        }
        f.erase(i == std::string::npos ? 0 : i);
    }
    const size_t cut = f.find_last_of(" :");
    f = cut == std::string::npos ? f : f.substr(cut + 1);
    return f == "??" ? std::string() : f;
}

/* Runs addr2line on one object for the given (site, address) pairs: for each address its inline
 * chain (innermost first; -a prints the address before it, -f each place's function before it).
 * The place shown is the chain's first outside common/cpu/ (shown_place), with its function. */
void ask_addr2line(const std::string &object,
                   const std::vector<std::pair<const void *, uintptr_t>> &sites)
{
    std::string cmd = "addr2line -a -f -C -i -e '" + object + "'";
    for (const auto &sa : sites) {
        char hex[32];
        snprintf(hex, sizeof(hex), " 0x%lx", (unsigned long)sa.second);
        cmd += hex;
    }
    cmd += " 2>/dev/null";
    std::vector<std::string> chain(sites.size()), where(sites.size()), func(sites.size());
    std::vector<bool> placed(sites.size());
    if (FILE *f = popen(cmd.c_str(), "r")) {
        char line[4096];
        int k = -1;           /* the site whose chain is being read */
        bool is_func = false; /* the next line names a function (-f), the one after it its place */
        std::string function; /* the function of the place read next */
        while (fgets(line, sizeof(line), f)) {
            std::string place(line);
            while (!place.empty() && (place.back() == '\n' || place.back() == ' '))
                place.pop_back();
            if (place.rfind("0x", 0) == 0) { /* the next address (no function's name starts so) */
                k++;
                is_func = true;
                continue;
            }
            if (is_func) {
                function = bare_name(place);
                is_func = false;
                continue;
            }
            is_func = true; /* a place: a function comes next, unless the next address does */
            if (k < 0 || k >= (int)sites.size() || place.empty() || place[0] == '?')
                continue;
            const size_t disc = place.find(" (discriminator");
            if (disc != std::string::npos)
                place.erase(disc);
            chain[k] += place + "|";
            const std::string file = place.substr(0, place.rfind(':'));
            if (!placed[k] && (where[k].empty() || !cpu_mode_file(file))) {
                where[k] = shown_place(place);
                func[k] = function;
                placed[k] = !cpu_mode_file(file);
            }
        }
        pclose(f);
    }
    for (size_t k = 0; k < sites.size(); k++) {
        site_info &si = g_sites[sites[k].first];
        si.where = where[k].empty() ? "?" : where[k];
        si.func = func[k];
        si.canon = chain[k].empty() ? sites[k].first
                                    : g_by_chain.emplace(chain[k], sites[k].first).first->second;
    }
}

} /* namespace */

/* Places the sites not yet known (see site_info) with addr2line (binutils), asked once per object
 * for all of them: the return address of the hook, minus one (inside the call instruction);
 * position-independent objects by offset from their load address. */
void resolve(const std::vector<const void *> &fresh)
{
    std::map<std::string, std::vector<std::pair<const void *, uintptr_t>>> by_object;
    for (const void *site : fresh) {
        g_sites[site] = site_info{site, "?", ""};
        Dl_info info;
        if (!dladdr(site, &info) || !info.dli_fbase)
            continue;
        std::string obj = info.dli_fname ? info.dli_fname : "";
        char self[4096];
        if (obj.find('/') == std::string::npos) { /* the program itself */
            const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
            if (len <= 0)
                continue;
            obj.assign(self, (size_t)len);
        }
        const Elf64_Ehdr *eh = (const Elf64_Ehdr *)info.dli_fbase;
        uintptr_t a = (uintptr_t)site - 1;
        if (eh->e_type == ET_DYN)
            a -= (uintptr_t)info.dli_fbase;
        by_object[obj].push_back({site, a});
    }
    for (const auto &kv : by_object)
        ask_addr2line(kv.first, kv.second);
}

bool known(const void *site)
{
    return g_sites.count(site) != 0;
}

const void *canonical(const void *site)
{
    auto it = g_sites.find(site);
    return it == g_sites.end() ? site : it->second.canon;
}

std::string where(const void *site)
{
    auto it = g_sites.find(site);
    return it == g_sites.end() ? std::string("?") : it->second.where;
}

std::string function(const void *site)
{
    auto it = g_sites.find(site);
    return it == g_sites.end() ? std::string() : it->second.func;
}

} /* namespace sites */
} /* namespace lab_cpu */
