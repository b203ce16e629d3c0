"""The numpy array types the model is made of, named once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]  # times (ns), slice rows, event indexes
I32 = npt.NDArray[np.int32]  # interned name and category ids, parents
I16 = npt.NDArray[np.int16]  # depths
F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]  # masks
