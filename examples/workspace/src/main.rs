fn main() {
    println!("hello from the example workspace");
}
