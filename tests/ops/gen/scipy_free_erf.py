"""erf for numpy arrays without scipy: math.erf elementwise (correctly rounded in float64)."""
import math

import numpy as np

erf = np.vectorize(math.erf, otypes=[np.float64])
