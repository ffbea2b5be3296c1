/* sites.h (CPU mode, internal) — where a memory-access site of a lab's code is in its source
 * (sites.cpp), for the bank and sector counter (banks.cpp). A site is the return address of an
 * access hook: one machine instruction. Lab code never includes it. */
#ifndef LAB_CPU_SITES_H
#define LAB_CPU_SITES_H

#include <string>
#include <vector>

namespace lab_cpu {
namespace sites {

/* Places the sites given (none of them known yet) with addr2line, asked once per object. */
void resolve(const std::vector<const void *> &fresh);
/* Whether site was placed already. */
bool known(const void *site);
/* The first site seen at the same place (the same inline chain of source lines): the compiler may
 * copy one access into several instructions that different lanes run, which a GPU runs as one;
 * a site addr2line cannot place is its own. */
const void *canonical(const void *site);
/* The place a table shows: "file:line", after its lab's number when the file is in a lab's
 * folder ("08/scan.cu:274"); "?" when unknown. */
std::string where(const void *site);
/* The name of the function that place is in, without its class, template arguments or
 * parameters ("scan_tile"); "" when unknown. */
std::string function(const void *site);

} /* namespace sites */
} /* namespace lab_cpu */

#endif /* LAB_CPU_SITES_H */
