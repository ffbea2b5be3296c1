/* compat/labs/07_hierarchical.h — the old name of course/07_hierarchical.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/07_hierarchical.h". */
#include "course/07_hierarchical.h"
