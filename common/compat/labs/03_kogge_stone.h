/* compat/labs/03_kogge_stone.h — the old name of course/03_kogge_stone.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/03_kogge_stone.h". */
#include "course/03_kogge_stone.h"
