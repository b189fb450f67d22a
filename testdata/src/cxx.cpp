// cxx: C++ names for demangling: namespaces, templates, a lambda, a
// virtual call, an operator, std::sort with a comparator.
//   main -> app::Runner::run -> geo::Shape::area (virtual)
//                           -> calc::accumulate<double> -> lambda
//                           -> sort_keys -> std::sort -> app::KeyLess::operator()
#include <algorithm>
#include <cstdlib>
#include <vector>
#include "fx-common.h"

namespace geo {
struct Shape {
	virtual ~Shape() = default;
	virtual double area(int n) const = 0;
};
struct Square : Shape {
	double side;
	explicit Square(double s) : side(s) {}
	NOINLINE double area(int n) const override
	{
		FX_LEAF_FRAME();
		double a = 0;
		for (int i = 0; i < n; i++)
			a += side * side + i;
		return a;
	}
};
} // namespace geo

namespace calc {
template <typename T, typename F>
NOINLINE T accumulate(const std::vector<T> &v, F f)
{
	T sum = 0;
	for (const T &x : v)
		sum += f(x);
	return sum;
}
} // namespace calc

namespace app {
struct KeyLess {
	NOINLINE bool operator()(unsigned a, unsigned b) const
	{
		FX_LEAF_FRAME();
		return (a * 2654435761u) < (b * 2654435761u);
	}
};

NOINLINE void sort_keys(std::vector<unsigned> &keys)
{
	std::sort(keys.begin(), keys.end(), KeyLess());
}

class Runner {
public:
	NOINLINE double run(const geo::Shape &s, int rounds)
	{
		std::vector<double> v(4096, 1.5);
		std::vector<unsigned> keys(20000);
		double total = 0;

		for (int r = 0; r < rounds; r++) {
			total += s.area(20000);
			total += calc::accumulate(v, [r](double x) NOINLINE {
				return x * r + 1;
			});
			for (unsigned i = 0; i < keys.size(); i++)
				keys[i] = i * 7919u + (unsigned)r;
			sort_keys(keys);
		}
		return total;
	}
};
} // namespace app

volatile double sink;

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 0.2), t0 = fx_now();
	geo::Square sq(1.25);
	app::Runner runner;

	while (fx_now() - t0 < secs)
		sink = runner.run(sq, 4);
	return 0;
}
