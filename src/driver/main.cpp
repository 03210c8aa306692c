#include <iostream>
#include "core/operation.hpp"
int main() { for (auto& n : kiln::registered_ops()) std::cout << n << "\n"; }
