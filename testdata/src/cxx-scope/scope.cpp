// cxx-scope: C++ names with their scopes when gcc inlines (-O2, inlining
// on): namespaces, a class template, lambdas, virtual calls, std::thread,
// std::async, std::function and std::generate_n.  Four threads spin for
// the given time (default 0.2 s):
//   main thread: shop::run_checkout -> std::function<...>::operator() ->
//     std::_Function_handler<...>::_M_invoke -> the lambda of
//     shop::make_rule (inlined) -> shop::detail::mix (inlined)
//   std::thread: std::thread::_State_impl<...>::_M_run -> the lambda of
//     main (inlined) -> shop::Ledger<unsigned long>::fill (inlined) ->
//     std::generate_n<...> (inlined) -> fill's lambda -> shop::detail::mix
//   std::async: ... std::__future_base::_Task_setter<...> ... ->
//     shop::audit -> shop::Pricer::price (virtual: shop::Discount::price,
//     shop::Premium<3>::price) -> shop::detail::mix (inlined)
//   std::thread of a member function: shop::Ledger<unsigned int>::spin
//   a timer thread (std::this_thread::sleep_for) sets shop::stop
// Built by scripts/record-cxx-scope.sh with g++ -O2 -g (see there).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <future>
#include <thread>
#include <vector>

namespace shop {

// set by a timer thread: no loop reads the clock (a sample in the vDSO
// would add frames that have nothing to do with names)
static std::atomic<bool> stop{false};

namespace detail {

inline uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

} // namespace detail

template <typename T>
class Ledger {
public:
	explicit Ledger(size_t n) : items_(n) {}

	void fill(uint32_t seed)
	{
		uint32_t s = seed;

		std::generate_n(items_.begin(), items_.size(), [&s]() {
			s = detail::mix(s + 1);
			return T(s);
		});
	}

	T total() const
	{
		T t = 0;

		for (const T &x : items_)
			t += x;
		return t;
	}

	// run by a std::thread as a member function
	void spin(std::atomic<uint64_t> *out)
	{
		uint64_t acc = 0;

		while (!stop.load(std::memory_order_relaxed)) {
			fill((uint32_t)acc);
			acc += total();
		}
		out->fetch_add(acc);
	}

private:
	std::vector<T> items_;
};

struct Pricer {
	virtual ~Pricer() = default;
	virtual uint64_t price(uint32_t x) const = 0;
};

struct Discount : Pricer {
	uint64_t price(uint32_t x) const override
	{
		uint64_t p = 0;

		for (uint32_t i = 0; i < 64; i++)
			p += detail::mix(x + i) % 1000;
		return p;
	}
};

template <int N>
struct Premium : Pricer {
	uint64_t price(uint32_t x) const override
	{
		uint64_t p = 0;

		for (uint32_t i = 0; i < 64 * N; i++)
			p += detail::mix(x ^ i) % (1000 * N);
		return p;
	}
};

// called through std::async; the pricers are picked at run time, so the
// calls stay virtual
__attribute__((noinline)) uint64_t audit(const std::vector<const Pricer *> &ps)
{
	uint64_t sum = 0;
	uint32_t x = 1;

	while (!stop.load(std::memory_order_relaxed)) {
		for (const Pricer *p : ps)
			sum += p->price(x++);
	}
	return sum;
}

__attribute__((noinline)) std::function<uint64_t(uint32_t)> make_rule(uint32_t salt)
{
	return [salt](uint32_t x) {
		uint64_t r = 0;

		for (uint32_t i = 0; i < 32; i++)
			r += detail::mix(x * salt + i) & 0xff;
		return r;
	};
}

__attribute__((noinline)) uint64_t run_checkout(const std::function<uint64_t(uint32_t)> &rule)
{
	uint64_t sum = 0;
	uint32_t x = 0;

	while (!stop.load(std::memory_order_relaxed)) {
		for (int i = 0; i < 64; i++)
			sum += rule(x++);
	}
	return sum;
}

} // namespace shop

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.2;
	std::atomic<uint64_t> out{0};
	shop::Discount d;
	shop::Premium<3> p3;
	std::vector<const shop::Pricer *> ps;

	if (secs <= 0)
		secs = 0.2;
	// the order depends on argc, so gcc cannot devirtualize the calls
	if (argc > 2) {
		ps.push_back(&p3);
		ps.push_back(&d);
	} else {
		ps.push_back(&d);
		ps.push_back(&p3);
	}
	std::thread timer([secs]() {
		std::this_thread::sleep_for(std::chrono::duration<double>(secs));
		shop::stop.store(true);
	});
	auto audited = std::async(std::launch::async, shop::audit, std::cref(ps));
	std::thread filler([&out]() {
		shop::Ledger<unsigned long> l(512);
		uint64_t acc = 0;

		while (!shop::stop.load(std::memory_order_relaxed)) {
			l.fill((uint32_t)acc);
			acc += l.total();
		}
		out.fetch_add(acc);
	});
	shop::Ledger<unsigned int> small(256);
	std::thread spinner(&shop::Ledger<unsigned int>::spin, &small, &out);
	uint64_t c = shop::run_checkout(shop::make_rule((uint32_t)argc * 2654435761u));

	timer.join();
	filler.join();
	spinner.join();
	c += audited.get();
	return (int)((c + out.load()) & 1) + 2 == 0;
}
