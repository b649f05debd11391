// The kernels of the op table's row EdgeCombine (op_table.h): a unit per row, so
// that the ops' instantiations compile in parallel.
#include "register/register_kernels.h"

TFSO_REGISTER_ROW(EdgeCombine)
