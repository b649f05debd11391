// The kernels of the op table's row TensorScatterDiv (op_table.h): a unit per row, so
// that the ops' instantiations compile in parallel.
#include "register/register_kernels.h"

TFSO_REGISTER_ROW(TensorScatterDiv)
