/* compat/labs/08_decoupled_lookback.h — the old name of course/08_decoupled_lookback.h, for a scan.cu written before the course's
 * headers moved from common/labs/ to common/course/ (2026-11-27): it still builds and grades the
 * same. New code includes "course/08_decoupled_lookback.h". */
#include "course/08_decoupled_lookback.h"
