/* compat/labs/09_operators.h — the old name of course/09_operators.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/09_operators.h". */
#include "course/09_operators.h"
