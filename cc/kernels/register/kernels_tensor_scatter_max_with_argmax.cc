// The kernels of the op table's row TensorScatterMaxWithArgmax (op_table.h): a unit per row, so
// that the ops' instantiations compile in parallel.
#include "register/register_kernels.h"

TFSO_REGISTER_ROW(TensorScatterMaxWithArgmax)
